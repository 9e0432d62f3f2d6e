// Intentionally empty: CKatana's functions are `static inline` in include/CKatana.h. SwiftPM needs one
// source file to build a C target.
