// Package quickstart holds the sample documents of the README's walkthrough and a test that
// follows the walkthrough against the real server binary: create a collection, upload a PDF, a
// DOCX and an HTML page, watch their jobs complete, and find a sentence of each by search.
package quickstart
