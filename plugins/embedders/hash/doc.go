// Package hash is the zero-configuration embedding provider: deterministic
// feature hashing of words, word bigrams and character trigrams into a fixed
// number of dimensions. It needs no data and no network, so it is always
// there; its vectors capture shared vocabulary (and, through trigrams,
// shared word stems) rather than meaning.
//
// Vectors are stable across versions of docindex for a given model id: the
// tokenizer, the features, their weights and the hash function are part of
// the model's definition. Any change to them is a new model id.
package hash
