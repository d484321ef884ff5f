# report.html draws its charts with Vega, Vega-Lite and vega-embed from the npm registry, pinned in the
# top-level package.json (package-lock.json fixes the whole tree). `npm ci` puts them in node_modules/
# (scripts/bootstrap.sh runs it); this file compiles their minified browser bundles and licences into
# parasim_reports, so every report is self-contained and parasim needs neither node nor a network at
# run time. Included from the top-level CMakeLists.txt once parasim_reports exists.
set(_vega_root ${PROJECT_SOURCE_DIR}/node_modules)
file(READ ${PROJECT_SOURCE_DIR}/package.json _vega_manifest)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/package.json)

set(_vega_bundles)
set(_vega_licences)
foreach(pkg vega vega-lite vega-embed)
  string(JSON pinned GET "${_vega_manifest}" dependencies ${pkg})
  set(pkg_json ${_vega_root}/${pkg}/package.json)
  set(bundle ${_vega_root}/${pkg}/build/${pkg}.min.js)
  if(NOT EXISTS ${pkg_json} OR NOT EXISTS ${bundle})
    message(FATAL_ERROR "report.html needs ${pkg} ${pinned} from npm, and ${bundle} is missing: run `npm ci` in "
                        "${PROJECT_SOURCE_DIR} (scripts/bootstrap.sh does), then configure again")
  endif()
  file(READ ${pkg_json} pkg_manifest)
  string(JSON installed GET "${pkg_manifest}" version)
  if(NOT installed STREQUAL pinned)
    message(FATAL_ERROR "node_modules holds ${pkg} ${installed} but package.json pins ${pinned}: run `npm ci` in "
                        "${PROJECT_SOURCE_DIR}, then configure again")
  endif()
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${pkg_json})
  string(MAKE_C_IDENTIFIER ${pkg} ident)
  string(TOUPPER ${ident} IDENT)
  target_compile_definitions(parasim_reports PRIVATE PARASIM_${IDENT}_VERSION="${installed}")
  list(APPEND _vega_bundles ${bundle})
  # Distinct names, so that each licence becomes its own parasim::embedded::<pkg>_licence().
  configure_file(${_vega_root}/${pkg}/LICENSE ${PROJECT_BINARY_DIR}/vendor/${ident}_licence.txt COPYONLY)
  list(APPEND _vega_licences ${PROJECT_BINARY_DIR}/vendor/${ident}_licence.txt)
endforeach()
# The embedding commands live in this (the top) folder, so a target here must run them: with the
# Makefile generator a custom command only builds for targets of its own folder.
add_custom_target(parasim_vega_bundles)
parasim_embed(parasim_vega_bundles ${_vega_bundles} ${_vega_licences})
get_target_property(_vega_sources parasim_vega_bundles SOURCES)
target_sources(parasim_reports PRIVATE ${_vega_sources})
add_dependencies(parasim_reports parasim_vega_bundles)
