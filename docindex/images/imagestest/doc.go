// Package imagestest makes documents with images in them for tests, offline: PNGs of
// printed text (rendered by poppler's pdftoppm from a PDF in Helvetica, so OCR can read
// them), PDFs whose pages hold text, images or whole-page scans, and DOCX and PPTX files
// with media. Tests of image descriptions (OCR or a vision model) use them as fixtures.
//
// Rendering needs pdftoppm (Debian poppler-utils; scripts/extract-deps.sh installs it);
// without it the test fails and says so.
package imagestest
