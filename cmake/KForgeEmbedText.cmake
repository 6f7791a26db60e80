# SPDX-License-Identifier: Apache-2.0
# cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=ns::name -P KForgeEmbedText.cmake
# Writes a C++ file defining `const char* const SYMBOL` as INPUT's text (a raw string literal), so the engine can
# hand its own CUDA source to NVRTC at run time.
file(READ "${INPUT}" text)
string(REGEX MATCH "^(.*)::([^:]+)$" _ "${SYMBOL}")
set(namespace "${CMAKE_MATCH_1}")
set(name "${CMAKE_MATCH_2}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/KForgeEmbedText.cmake: do not edit.\n"
     "namespace ${namespace} {\nextern const char* const ${name};\nconst char* const ${name} = R\"kforge_embed(${text})kforge_embed\";\n}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
