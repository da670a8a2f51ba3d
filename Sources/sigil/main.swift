print("sigil")
