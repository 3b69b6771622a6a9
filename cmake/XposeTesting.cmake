# xpose_add_mpi_test(NAME name RANKS n COMMAND exe [args...] [TIMEOUT s])
# Runs `exe` under MPIEXEC_EXECUTABLE with n ranks; ctest's PROCESSORS
# property keeps ctest -j from overcommitting the machine.  Open MPI gets
# --oversubscribe so 4 ranks run on a 2-core machine.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _xpose_mpiexec_version
  ERROR_QUIET)
if(_xpose_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(XPOSE_MPIEXEC_PREFLAGS "--oversubscribe" CACHE STRING "Extra mpiexec flags for tests")
else()
  set(XPOSE_MPIEXEC_PREFLAGS "" CACHE STRING "Extra mpiexec flags for tests")
endif()
separate_arguments(_xpose_preflags UNIX_COMMAND "${MPIEXEC_PREFLAGS} ${XPOSE_MPIEXEC_PREFLAGS}")

# Lets Open MPI run as root (CI containers), keeps its shared-memory
# transport off ptrace-based single copy, which containers usually forbid,
# and stops mpirun waiting a second before tearing down a job whose ranks
# exit non-zero (the error tests do that dozens of times).
set(XPOSE_MPI_TEST_ENVIRONMENT
  "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl_vader_single_copy_mechanism=none;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_odls_base_sigkill_timeout=0")

# What test scripts need to start MPI jobs themselves, flags as one string.
string(JOIN " " _xpose_preflags_text ${_xpose_preflags})
set(XPOSE_MPI_SCRIPT_ENVIRONMENT "${XPOSE_MPI_TEST_ENVIRONMENT};MPIEXEC=${MPIEXEC_EXECUTABLE};MPIEXEC_NUMPROC_FLAG=${MPIEXEC_NUMPROC_FLAG};MPIEXEC_PREFLAGS=${_xpose_preflags_text}")

function(xpose_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;RANKS;TIMEOUT" "COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  list(POP_FRONT T_COMMAND exe)
  if(TARGET ${exe})
    set(exe $<TARGET_FILE:${exe}>)
  endif()
  add_test(NAME ${T_NAME}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${_xpose_preflags}
            ${exe} ${MPIEXEC_POSTFLAGS} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES PROCESSORS ${T_RANKS} TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${XPOSE_MPI_TEST_ENVIRONMENT}" LABELS mpi)
endfunction()
