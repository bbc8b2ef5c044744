// Package structured pulls typed rows out of documents with a language model: the extraction
// tables of a rag collection (its `tables` definition) are turned into a JSON Schema for strict
// structured output and into a prompt with the collection's extraction instructions; the
// document's pages are sent in windows that fit a character budget (at most maxPages of them);
// every row of the answer is validated and coerced like an ingested row (dataset.Table.RowObject),
// rows of all windows are merged, and Replace writes the rows of one file in one transaction.
//
// A row the model gets wrong is rejected with a warning (table, row index, reason), never
// stored half-right; the other rows are kept. The caller turns warnings into the file's
// indexed_with_warning status.
package structured
