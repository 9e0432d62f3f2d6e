// Generated tests land beside this file: RecordedSession.swift (kept) and BrowserSession.swift (the browser test's,
// removed after its run).
