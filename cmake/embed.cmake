# parasim_embed(TARGET file...): compiles data files (profiles, the scenario schema) into the binary so
# parasim runs from any folder. Each file becomes `std::string_view parasim::embedded::<stem>()`.
function(parasim_embed target)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/embedded)
  file(MAKE_DIRECTORY ${out_dir})
  set(generated)
  foreach(file IN LISTS ARGN)
    get_filename_component(abs ${file} ABSOLUTE)
    get_filename_component(stem ${file} NAME_WE)
    string(MAKE_C_IDENTIFIER ${stem} ident)
    set(cpp ${out_dir}/${ident}.cpp)
    add_custom_command(
      OUTPUT ${cpp}
      COMMAND ${CMAKE_COMMAND} -DIN=${abs} -DOUT=${cpp} -DIDENT=${ident}
              -P ${PROJECT_SOURCE_DIR}/cmake/embed_one.cmake
      DEPENDS ${abs} ${PROJECT_SOURCE_DIR}/cmake/embed_one.cmake
      COMMENT "Embedding ${file}")
    list(APPEND generated ${cpp})
  endforeach()
  target_sources(${target} PRIVATE ${generated})
endfunction()
