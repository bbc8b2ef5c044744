// Package images finds the images in documents and turns them into text for indexing.
//
// A Describer turns one Image into text. Two kinds fit: a vision model, which describes
// what an image shows, and OCR, which reads the words printed on it. The package ships
// OCR, running the tesseract command (Debian tesseract-ocr with tesseract-ocr-eng), so
// that scanned documents become searchable on a machine without any model; a vision
// model plugs in later behind the same interface.
//
// A Collector pulls the images out of a document, one at a time, for one of two modes:
//
//   - ModeAll: every image of the document. PDFs give their embedded images
//     (pdfimages, with the page each appears on; an image drawn on several pages is
//     described once, on the first); DOCX gives word/media/*; PPTX gives the images of
//     its slides (ppt/media/* through each slide's relationships, with the slide
//     number; layout and master images, which repeat on every slide, are left out).
//   - ModeEmptyPages: only pages without extractable text. PDF pages without text are
//     rendered whole (pdftoppm -r 200 -png) so a scanned page is read as the page it is;
//     PPTX gives the images of slides without text; DOCX, which has no pages, gives its
//     images only when the document holds no text at all.
//
// An uploaded image file (PNG, JPEG, GIF, TIFF, WebP, BMP) is one image in both modes.
//
// Collector.Describe runs a Describer over what the Collector finds and returns the
// descriptions with their page. Work is bounded: at most WithMaxImages images per
// document and WithMaxImageBytes bytes per image; images too small to hold text or
// meaning (icons, rules) are skipped. An image that cannot be read or described becomes
// a warning and the others go on; only a cancelled context stops the run.
//
// The poppler tools (pdftoppm, pdfimages, pdfinfo; Debian poppler-utils) are looked up
// on PATH; without them PDFs give no images and a warning says what to install.
package images
