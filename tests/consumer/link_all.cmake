# lowbit_consumer_link_all(<target>): links <target> with every lowbit target
# that exists (lowbit::formats always; reference, registry, simd, cuda,
# backends, check when built) and defines LOWBIT_CONSUMER_HAS_<ROLE> for each,
# so main.cc calls into every library it links.
function(lowbit_consumer_link_all target)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE lowbit::formats)
  set(linked formats)
  foreach(role reference registry simd cuda backends check)
    # An installed package can hold lowbit::cuda while this machine lacks
    # the CUDA toolkit: lowbitConfig.cmake then says lowbit_cuda_FOUND FALSE.
    if(TARGET lowbit::${role} AND NOT (DEFINED lowbit_${role}_FOUND AND NOT lowbit_${role}_FOUND))
      target_link_libraries(${target} PRIVATE lowbit::${role})
      string(TOUPPER ${role} upper)
      target_compile_definitions(${target} PRIVATE LOWBIT_CONSUMER_HAS_${upper}=1)
      list(APPEND linked ${role})
    endif()
  endforeach()
  message(STATUS "lowbit consumer links: ${linked}")
endfunction()
