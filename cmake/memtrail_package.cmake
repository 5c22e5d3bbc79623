# find_package(memtrail) support, for the build tree and the install tree:
# exports the recorder, format, analyzer and gtest libraries and writes
# memtrailConfig.cmake next to them (see cmake/memtrailConfig.cmake.in).
include(CMakePackageConfigHelpers)

set(_memtrail_exported memtrail memtrail_format memtrail_analyzer)
set_target_properties(memtrail_format PROPERTIES EXPORT_NAME format)
set_target_properties(memtrail_analyzer PROPERTIES EXPORT_NAME analyzer)
if(TARGET memtrail_gtest)
  set_target_properties(memtrail_gtest PROPERTIES EXPORT_NAME gtest)
  list(APPEND _memtrail_exported memtrail_gtest)
endif()

install(TARGETS ${_memtrail_exported} EXPORT memtrailTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tracer/include/ ${PROJECT_SOURCE_DIR}/analyzer/include/
                  ${PROJECT_SOURCE_DIR}/analyzer/gtest/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_memtrail_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/memtrail)
install(EXPORT memtrailTargets NAMESPACE memtrail:: DESTINATION ${_memtrail_cmake_dir})
export(EXPORT memtrailTargets NAMESPACE memtrail:: FILE ${PROJECT_BINARY_DIR}/memtrailTargets.cmake)

write_basic_package_version_file(${PROJECT_BINARY_DIR}/memtrailConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)

# Build tree: the config sits in the build directory, the CLI in bin/.
set(MEMTRAIL_EXECUTABLE_PATH ${PROJECT_BINARY_DIR}/bin/memtrail)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/memtrailConfig.cmake.in
  ${PROJECT_BINARY_DIR}/memtrailConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR}
  PATH_VARS MEMTRAIL_EXECUTABLE_PATH)
configure_file(${CMAKE_CURRENT_LIST_DIR}/MemtrailAddTest.cmake ${PROJECT_BINARY_DIR}/MemtrailAddTest.cmake COPYONLY)

# Install tree.
set(MEMTRAIL_EXECUTABLE_PATH ${CMAKE_INSTALL_BINDIR}/memtrail)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/memtrailConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install-config/memtrailConfig.cmake
  INSTALL_DESTINATION ${_memtrail_cmake_dir}
  PATH_VARS MEMTRAIL_EXECUTABLE_PATH)
install(FILES ${PROJECT_BINARY_DIR}/install-config/memtrailConfig.cmake
              ${PROJECT_BINARY_DIR}/memtrailConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/MemtrailAddTest.cmake
  DESTINATION ${_memtrail_cmake_dir})
