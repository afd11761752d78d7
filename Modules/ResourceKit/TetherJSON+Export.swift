// `JSONValue` is what the JSON transformer makes of a body and what `Resource.json` returns: part of ResourceKit's
// vocabulary, so `import ResourceKit` brings it in.
@_exported public import TetherJSON
