// The declaration in include/CFuzzerDriver.h is all this target provides; a C target needs a source.
