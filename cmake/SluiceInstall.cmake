# Installs libsluice, the per-layer libraries, the headers, a CMake package
# (find_package(sluice) -> sluice::sluice, and sluice::<layer> for one layer
# and those below it) and a pkg-config file (pkg-config --cflags --libs
# sluice). tests/install/ proves them from a downstream project (ctest -L
# install).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SLUICE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)

# The public headers need C++20 (std::span): a usage requirement, exported
# with the target so that downstream projects compile them as C++20.
target_compile_features(sluice PUBLIC cxx_std_20)
# src/CMakeLists.txt links zlib PRIVATE; a static libsluice exports it as
# $<LINK_ONLY:ZLIB::ZLIB>, so sluiceConfig.cmake finds ZLIB and sluice.pc
# lists -lz.

# sluice::sluice is libsluice, every layer's objects in one library: the sum
# of the layers. sluice::<layer> (libsluice_<layer>.a) links the layers below
# it. Link one or the other: both hold the same objects.
get_property(SLUICE_LAYERS GLOBAL PROPERTY SLUICE_LAYERS)
set(_sluice_layer_targets)
foreach(layer IN LISTS SLUICE_LAYERS)
  list(APPEND _sluice_layer_targets sluice_${layer})
endforeach()
install(TARGETS sluice ${_sluice_layer_targets} EXPORT sluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sluice DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${SLUICE_INSTALL_CMAKEDIR})

# sluice::mpi (libsluice_mpi.a, MpiCommunicator; links sluice::distribute and
# MPI), where CMake found MPI: not in libsluice. Its own export set, which
# sluiceConfig.cmake loads only when the downstream project finds MPI too.
set(SLUICE_INSTALL_MPI OFF)
if(TARGET sluice_mpi)
  set(SLUICE_INSTALL_MPI ON)
  set_target_properties(sluice_mpi PROPERTIES EXPORT_NAME mpi)
  install(TARGETS sluice_mpi EXPORT sluiceMpiTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT sluiceMpiTargets NAMESPACE sluice:: DESTINATION ${SLUICE_INSTALL_CMAKEDIR})
endif()

string(JOIN ", " SLUICE_LAYERS_TEXT ${SLUICE_LAYERS})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sluiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${SLUICE_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sluiceConfig.cmake ${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  DESTINATION ${SLUICE_INSTALL_CMAKEDIR})

# pkg-config: paths relative to the .pc file's own folder (${pcfiledir}),
# unless a directory was configured as an absolute path.
set(_sluice_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${_sluice_pcdir}")
  set(SLUICE_PC_RELATIVE_PREFIX "")
  file(RELATIVE_PATH SLUICE_PC_RELATIVE_PREFIX "${_sluice_pcdir}" "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH SLUICE_PC_RELATIVE_PREFIX "/${_sluice_pcdir}" "/")
endif()
string(REGEX REPLACE "/$" "" SLUICE_PC_RELATIVE_PREFIX "${SLUICE_PC_RELATIVE_PREFIX}")
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(SLUICE_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(SLUICE_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/sluice.pc.in ${PROJECT_BINARY_DIR}/sluice.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sluice.pc DESTINATION ${_sluice_pcdir})
# sluice-mpi.pc beside it where sluice::mpi is installed; it requires Open
# MPI's own pkg-config module (Debian's libopenmpi-dev ships ompi-cxx).
if(SLUICE_INSTALL_MPI)
  set(SLUICE_PC_MPI ompi-cxx)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/sluice-mpi.pc.in ${PROJECT_BINARY_DIR}/sluice-mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/sluice-mpi.pc DESTINATION ${_sluice_pcdir})
endif()
