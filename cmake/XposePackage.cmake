# Installing libxpose as a package: the library, xpose.h and the generated
# xpose_config.h, a CMake package (find_package(xpose) gives xpose::xpose
# with its usage requirements) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS xpose EXPORT xposeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/xpose.h ${PROJECT_BINARY_DIR}/include/xpose_config.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# A static library with CUDA needs the static CUDA runtime at link time; a
# shared one carries it inside, and NCCL is loaded at run time either way.
set(XPOSE_NEEDS_CUDA_RUNTIME OFF)
if(XPOSE_HAVE_CUDA AND NOT BUILD_SHARED_LIBS)
  set(XPOSE_NEEDS_CUDA_RUNTIME ON)
  get_filename_component(XPOSE_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/xpose)
install(EXPORT xposeTargets NAMESPACE xpose:: DESTINATION ${config_dir})
configure_package_config_file(cmake/xposeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/xposeConfig.cmake INSTALL_DESTINATION ${config_dir})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/xposeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/xposeConfig.cmake ${PROJECT_BINARY_DIR}/xposeConfigVersion.cmake
  DESTINATION ${config_dir})

# pkg-config: relocatable (the prefix is found from the file's own place),
# and complete with `pkg-config --cflags --libs xpose` alone: MPI's flags,
# and for a static library everything it links.
file(RELATIVE_PATH XPOSE_PC_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(cflags "")
foreach(dir IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND cflags " -I${dir}")
endforeach()
set(libs "")
foreach(lib IN LISTS MPI_C_LIBRARIES)
  string(APPEND libs " ${lib}")
endforeach()
set(private "")
set(own_libs " -lpthread")
if(XPOSE_HAVE_CUDA)
  set(own_libs " ${CUDA_cudart_static_LIBRARY} -ldl -lrt -lpthread")
endif()
if(BUILD_SHARED_LIBS)
  string(APPEND private "${own_libs}")
else()
  string(APPEND libs "${own_libs}")
endif()
set(XPOSE_PC_CFLAGS "${cflags}")
set(XPOSE_PC_LIBS "${libs}")
set(XPOSE_PC_LIBS_PRIVATE "${private}")
configure_file(cmake/xpose.pc.in ${PROJECT_BINARY_DIR}/xpose.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/xpose.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
