// Imports only the C library, so that .ci/check-apple-branches can type-check the Apple branch on Linux against
// its stand-in Darwin module.
#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// The size of the calling thread's stack, in bytes, as the system reports it; nil where it cannot be read.
func currentThreadStackSize() -> Int? {
  #if canImport(Darwin)
    return pthread_get_stacksize_np(pthread_self())
  #elseif canImport(Glibc)
    let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
    defer { attributes.deallocate() }
    guard pthreadGetattrNP(pthread_self(), attributes) == 0 else { return nil }
    defer { pthread_attr_destroy(attributes) }
    var size = 0
    guard pthread_attr_getstacksize(attributes, &size) == 0 else { return nil }
    return size
  #else
    return nil
  #endif
}

#if !canImport(Darwin) && canImport(Glibc)
  /// glibc's `pthread_getattr_np`, which the Glibc module does not export (it needs `_GNU_SOURCE`): the
  /// attributes of a running thread, its actual stack included.
  @_silgen_name("pthread_getattr_np")
  private func pthreadGetattrNP(_ thread: pthread_t, _ attributes: UnsafeMutablePointer<pthread_attr_t>) -> Int32
#endif
