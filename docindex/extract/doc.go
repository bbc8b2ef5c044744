// Package extract turns an uploaded file into text for indexing.
//
// An Extractor reads a local file (the pipeline downloads the blob to a temporary
// file first) and returns a Document: its format, title, and the text of each page
// (PDF pages and PPTX slides are numbered pages; other formats give one page, or one
// per spreadsheet sheet, with Number 0). Where the source has structure the text is
// Markdown: HTML main content, DOCX and ODT headings, lists and tables, spreadsheets
// and CSV as Markdown tables, slide titles as headings.
//
// Supported formats: plain text, Markdown, HTML, JSON, CSV/TSV, PDF, DOCX, PPTX, ODT
// and XLSX. PDF text comes from poppler's pdftotext when it is installed (it handles
// columns, ligatures and fonts best) and otherwise from a pure Go reader built on
// github.com/ledongthuc/pdf that rebuilds lines from glyph positions.
//
// Errors are of three kinds:
//   - ErrUnsupported (and ErrEncrypted, ErrCorrupt, which match it with errors.Is):
//     permanent, retrying cannot help; callers fail the job at once.
//   - anything else (I/O, a cancelled context): possibly transient.
//   - a file that is only partly readable (one PDF page fails, the text cap is
//     reached, a PDF without a text layer) is not an error: the Document carries
//     Warnings, and the file ends indexed_with_warning.
//
// Memory is bounded: text formats are streamed through a cap on the extracted text
// (WithMaxTextBytes, default 32 MiB; past it the text is cut and a warning says so),
// zipped XML formats are decoded as streams, PDF pages are read one at a time and
// pdftotext's output is consumed as a stream. HTML is the exception that reads its
// input whole (a DOM is needed to find the main content), up to the same cap.
package extract
