import Foundation
import Hummingbird

/// The request context of the to-do API: Hummingbird's basic context with a small body limit and stable JSON.
public struct TodoRequestContext: RequestContext {
  /// Hummingbird's per-request storage.
  public var coreContext: CoreRequestContextStorage

  /// Creates the context for a request.
  public init(source: ApplicationRequestContextSource) {
    self.coreContext = .init(source: source)
  }

  /// Bodies are small JSON objects (a title is at most 200 characters): refuse anything over 16 KiB
  /// with 413, without reading the rest.
  public var maxUploadSize: Int { 16 * 1024 }

  /// JSON with keys in a fixed order, so that responses are byte-for-byte repeatable.
  public var responseEncoder: JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }
}
