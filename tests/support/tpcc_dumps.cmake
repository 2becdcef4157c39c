# Makes the TPC-C dumps that the checker's tests read (tests/check/dump_fixture.h)
# once per ctest run, as the fixture tpcc_dump (tests/CMakeLists.txt): a short
# single-worker NO_WAIT run on the small schema, with inserts and without.
#   cmake -DABYSS=<the abyss binary> -DDIR=<where> -P tpcc_dumps.cmake
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
foreach(inserts on off)
  execute_process(COMMAND ${ABYSS} run --workload tpcc --tpcc-schema small --warehouses 1 --tpcc-inserts ${inserts}
                          --cc no_wait --threads 1 --duration 0.05 --warmup 0 --dump ${DIR}/inserts-${inserts}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the TPC-C dump with --tpcc-inserts ${inserts} failed (exit ${rc}): ${err}")
  endif()
endforeach()
