# Layers: one static library per folder under src/, each compiled seeing only
# the headers it may use, so that an upward include fails to build
# (tests/layering/ proves it).
#
#   sluice_layer(NAME <layer> [DEPS <lower layers>...] SOURCES <.cc files>...
#                [INTERNAL <private headers>...])
#
# Makes the static library sluice_<layer> (file libsluice_<layer>.a; alias
# and exported name sluice::<layer>), linked to the layers in DEPS. A source
# of the layer, and a target that links sluice::<layer>, sees:
#   - "sluice/<l>/x.h": the public headers of the layer and of every layer
#     below it in DEPS (include/sluice/<l>/);
#   - "<l>/x.h" for the INTERNAL headers of the layers below it: private
#     headers (src/<l>/) that a layer lists for the layers above it, such as
#     core's philox.h. They are never installed.
# A source of the layer also sees its own private headers, "<layer>/x.h"
# (src/<layer>/). Nothing else of include/ or src/ is on its include path.
#
# The views are links under ${PROJECT_BINARY_DIR}/layers/<layer>/ (include/,
# internal/, private/) to the real folders and files, so #include lines keep
# their paths and a header edit needs no reconfigure.
#
# Adding a layer: src/<layer>/CMakeLists.txt with one sluice_layer() call,
# and add_subdirectory(<layer>) in src/CMakeLists.txt, after the layers it
# depends on. libsluice, the install and the CMake package pick it up (the
# global property SLUICE_LAYERS lists the layers in the order they were made).
include_guard(GLOBAL)
include(GNUInstallDirs)

set(SLUICE_LAYER_VIEWS ${PROJECT_BINARY_DIR}/layers)

# A symbolic link `link` -> `target`, replacing what was there.
function(_sluice_view_link target link)
  get_filename_component(dir ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  file(CREATE_LINK ${target} ${link} SYMBOLIC)
endfunction()

function(sluice_layer)
  cmake_parse_arguments(L "" "NAME" "SOURCES;DEPS;INTERNAL" ${ARGN})
  set(name ${L_NAME})
  set(views ${SLUICE_LAYER_VIEWS}/${name})
  set(src ${PROJECT_SOURCE_DIR}/src/${name})

  _sluice_view_link(${PROJECT_SOURCE_DIR}/include/sluice/${name} ${views}/include/sluice/${name})
  _sluice_view_link(${src} ${views}/private/${name})
  # Internal headers: one link per file, the stale ones removed first.
  file(GLOB stale LIST_DIRECTORIES true ${views}/internal/${name}/*)
  if(stale)
    file(REMOVE ${stale})
  endif()
  file(MAKE_DIRECTORY ${views}/internal/${name})
  foreach(header IN LISTS L_INTERNAL)
    _sluice_view_link(${src}/${header} ${views}/internal/${name}/${header})
  endforeach()

  add_library(sluice_${name} STATIC ${L_SOURCES})
  add_library(sluice::${name} ALIAS sluice_${name})
  set_target_properties(sluice_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(sluice_${name}
    PUBLIC $<BUILD_INTERFACE:${views}/include> $<BUILD_INTERFACE:${views}/internal>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${views}/private)
  # The public headers need C++20 (std::span): a usage requirement.
  target_compile_features(sluice_${name} PUBLIC cxx_std_20)
  target_link_libraries(sluice_${name} PUBLIC Threads::Threads PRIVATE $<BUILD_INTERFACE:sluice_compile_options>)
  foreach(dep IN LISTS L_DEPS)
    target_link_libraries(sluice_${name} PUBLIC sluice_${dep})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY SLUICE_LAYERS ${name})
endfunction()

# sluice_layer_view(<target> <layer>): `target` compiles as a source of
# `layer` does (its headers, its private headers) and links it. For the
# layer's tests and for tests/layering's probes.
function(sluice_layer_view target layer)
  target_link_libraries(${target} PRIVATE sluice_${layer})
  target_include_directories(${target} PRIVATE ${SLUICE_LAYER_VIEWS}/${layer}/private)
endfunction()
