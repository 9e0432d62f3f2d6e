import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The page's files, from the package's resources, read once.
enum InspectorPage {
  /// Each file the page is made of, with its content type.
  static let files: [(path: String, name: String, type: String)] = [
    ("/", "index.html", "text/html; charset=utf-8"),
    ("/inspector.js", "inspector.js", "text/javascript; charset=utf-8"),
    ("/inspector.css", "inspector.css", "text/css; charset=utf-8"),
    ("/favicon.svg", "favicon.svg", "image/svg+xml"),
  ]

  static func addRoutes<Context: RequestContext>(to router: Router<Context>) {
    for file in files {
      let body = load(file.name)
      router.get(RouterPath(file.path)) { _, _ -> Response in
        var headers = HTTPFields()
        headers[.contentType] = file.type
        headers[.cacheControl] = "no-store"
        // Nothing on the page comes from elsewhere, and nothing else may frame it.
        headers[HTTPField.Name("Content-Security-Policy")!] =
          "default-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
      }
    }
  }

  private static func load(_ name: String) -> ByteBuffer {
    let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Page")
    guard let url, let data = try? Data(contentsOf: url) else {
      return ByteBuffer(string: "The inspector's page (\(name)) is missing from the package's resources.")
    }
    return ByteBuffer(bytes: data)
  }
}
