// Command docindex-connector-docsuite is the docsuite connector plugin: it
// reads Confluence spaces and MediaWiki namespaces (package
// connectors/docsuite). docindex starts it from its plugin directory; run
// by hand it only explains that.
package main
