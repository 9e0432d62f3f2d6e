// The Apple branch imports only Darwin and CKatana, so that .ci/check-apple-branches can type-check it on Linux
// against its stand-in Darwin module (which Foundation there would not re-export).
#if canImport(Darwin)
  import CKatana
  import Darwin
#else
  import Foundation
#endif

/// The resident set size of this process, in bytes, or nil where it cannot be read.
func residentMemory() -> Int? {
  #if canImport(Darwin)
    var info = mach_task_basic_info()
    var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
    let result = withUnsafeMutablePointer(to: &info) { pointer in
      pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
        // `mach_task_self_` read from Swift is "not concurrency-safe" in Swift 6 mode with the SDKs that declare
        // it as a plain global; CKatana reads it in C.
        task_info(ckatana_mach_task_self(), task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
      }
    }
    return result == KERN_SUCCESS ? Int(info.resident_size) : nil
  #elseif os(Linux)
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  #else
    return nil
  #endif
}
