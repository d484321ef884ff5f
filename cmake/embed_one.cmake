# Writes OUT: a C++ file whose function parasim::embedded::IDENT() returns the bytes of IN.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
file(WRITE ${OUT}.tmp
"// Generated from ${IN}; do not edit.\n#include <string_view>\nnamespace parasim::embedded {\nstatic const char kData[] = {${bytes} '\\0'};\nstd::string_view ${IDENT}() { return {kData, sizeof(kData) - 1}; }\n}\n")
file(RENAME ${OUT}.tmp ${OUT})
