# Debian's libxsimd-dev 8.x exports the `xsimd` target with
# INTERFACE_LINK_LIBRARIES "xtl" but its config never looks for xtl, so any
# link against `xsimd` ends up with a bogus `-lxtl`. xtl is optional for xsimd
# (only with XSIMD_ENABLE_XTL_COMPLEX), so: use the real xtl target if the xtl
# package is installed, else provide an empty stand-in target named `xtl`.
# Included after find_package(xsimd) by CMakeLists.txt and janusConfig.cmake.
if(TARGET xsimd AND NOT TARGET xtl)
  get_target_property(_janus_xsimd_libs xsimd INTERFACE_LINK_LIBRARIES)
  if(_janus_xsimd_libs AND "xtl" IN_LIST _janus_xsimd_libs)
    find_package(xtl CONFIG QUIET)
    if(NOT TARGET xtl)
      add_library(xtl INTERFACE IMPORTED)
    endif()
  endif()
  unset(_janus_xsimd_libs)
endif()
