// Package chunk splits the extracted text of a document into the chunks that
// are embedded and indexed.
//
// Three strategies exist, chosen per collection:
//
//   - "recursive" (the default): LangChain's recursive character splitter (the
//     algorithm of github.com/tmc/langchaingo/textsplitter, ported to work on
//     byte ranges so page numbers stay exact), which cuts on paragraphs, then
//     lines, then words, then characters, merging the pieces up to Size tokens
//     with up to Overlap tokens carried from one chunk into the next.
//   - "markdown": the text is first cut at every Markdown heading (ATX "# ..."
//     and single-line setext headings; fenced code is left alone), each chunk
//     records its heading path in Metadata["headings"], and each section is then
//     split like "recursive".
//   - "semantic": the text is cut into sentences (github.com/neurosnap/sentences,
//     English), every sentence is embedded with the caller's EmbedFunc, and a
//     chunk ends where the cosine distance between neighbouring sentences is
//     above the given percentile of all such distances (95 by default). Size
//     stays an upper bound: a long topic is packed into several chunks of whole
//     sentences. Overlap does not apply to this strategy.
//
// Sizes are counted in tokens of OpenAI's cl100k_base encoding
// (github.com/tiktoken-go/tokenizer, vocabulary compiled in, so no download at
// run time). Tokens gives the codec's exact counts several times faster: it
// cuts the text into the codec's pre-tokens by hand and caches the count of
// each distinct pre-token (tokens.go). Defaults: Size 512 tokens, Overlap one
// eighth of Size (64 tokens at the default size); NoOverlap asks for none.
//
// A document comes in as Sections, one per page where the format has pages.
// They are joined with a blank line, so chunks may cross page boundaries, and
// every chunk reports the pages it spans. Chunk texts are verbatim slices of
// the joined text: nothing is rewritten, so a chunk can be found in its source.
package chunk
