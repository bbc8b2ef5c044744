// Command docindex-embedder-glove serves offline GloVe word vectors (model
// glove-100d) as a docindex plugin. It reads glove-100d.bin from beside
// itself or from $DOCINDEX_GLOVE_FILE; scripts/glove.sh prepares that file.
package main
