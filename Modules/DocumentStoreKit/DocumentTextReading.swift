import TetherJSON

/// A reader that keeps each document as its canonical JSON text (`JSONValue.jsonText`: compact, keys sorted) and
/// hands that text over without parsing it. A mirror compares a response with what its scope holds this way: one
/// text comparison per document, where parsing each stored document would cost many times more.
package protocol DocumentTextReading {
    /// The `_id` and stored text of each document matching `query`, in its order. The text is the one the store
    /// wrote: the document's canonical text, unless another program wrote the row in another form.
    func documentTexts(matching query: DocumentQuery) throws -> [(id: String, text: String)]
}

extension DocumentReader {
    /// The `_id` and canonical JSON text of each document matching `query`, in its order: read as text from a store
    /// that keeps it so (``DocumentTextReading``), else written out from the documents read.
    package func canonicalTexts(matching query: DocumentQuery) throws -> [(id: String, text: String)] {
        if let reader = self as? any DocumentTextReading { return try reader.documentTexts(matching: query) }
        return try documents(matching: query).map { ($0.id, $0.body.jsonText) }
    }
}
