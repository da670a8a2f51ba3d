// The one helper every stub shares. The stubs and the checked sources are type-checked as one module
// (AppleCheck/run), so it is declared once, here.

/// Stands for every body in these stubs: they are type-checked against, never run or linked.
func stub() -> Never { fatalError("AppleCheck stubs are for type-checking only") }
