# CI's schedule (docs/ci.md, "Test time"). Included last from
# tests/CMakeLists.txt, once every test of this directory exists.
#
# 1. COST: CTest starts the tests with the highest COST first (within a fixture's dependency
#    level). A fresh clone has no Testing/Temporary/CTestCostData.txt, and CMake 3.25 does not
#    read back the recorded cost of a test whose name has a space (every doctest case: it takes the
#    first word for the name), so without COST a fresh CI run starts tests in the order they were
#    added, and a long one added late leaves the other core idle at the end. Each COST below is the
#    test's measured seconds in that build (docs/ci.md), rounded; only the order matters.
# 2. Labels of single doctest cases (doctest_discover_tests gives one label per executable):
#    `one_thread` (the thread stage leaves them out) and `convergence` (the address stage leaves
#    them out); tests/README.md states the rules, and tests/check_test_suite.py fails when a case
#    named here does not exist.

if(CFR_SANITIZE STREQUAL "thread")
  set(cfr_cost_column 3)
elseif(CFR_SANITIZE STREQUAL "address")
  set(cfr_cost_column 2)
else()
  set(cfr_cost_column 1)
endif()

# Tests added in this directory: "name|Release s|address s" (thread: only serve.* and sched run,
# and the serve tests are short there). A test this configuration does not have is skipped.
set(cfr_costs
  "sweep.bad_flags_of_the_torch_apps_exit_2_naming_the_flag|98|0"
  "sweep.bad_flags_exit_2_naming_the_flag|66|4"
  "cli.eval_during_training_evaluates_the_newest_complete_checkpoint|80|0"
  "nets.gpu_build_configuration|60|0"
  "run.sigkill_at_random_moments_then_resume|55|0"
  "run.kuhn_escher_exploitability_below_0.15_after_60_iterations|42|0"
  "mmd.league_and_exploiter|37|0"
  "run.leduc_merged_samples_fit_the_advantage_memories|35|0"
  "run.kuhn_overlap_exploitability_below_0.1_after_60_iterations|28|0"
  "serve.browser_play|21|23"
  "search.k1_is_the_network_and_search_is_reproducible|20|0"
  "run.sigterm_during_evaluation_lost_cities|18|0"
  "checkpoint.flipped_bytes_in_each_file_are_refused_by_name|17|0"
  "search.value_leaves|16|0"
  "run.sigterm_during_training_lost_cities|15|0"
  "run.kuhn_exploitability_below_0.1_after_30_iterations|14|0"
  "run.sigterm_during_second_lost_cities|14|0"
  "serve.security_gzip_bomb|7|13"
  "serve.security_limits|11|10"
  "serve.browser_replay|8|8"
  "serve.browser_play_keys|6|6")
if(cfr_cost_column LESS 3)
  foreach(entry IN LISTS cfr_costs)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 cfr_name)
    list(GET entry ${cfr_cost_column} cfr_cost)
    if(TEST ${cfr_name} AND cfr_cost GREATER 0)
      set_tests_properties(${cfr_name} PROPERTIES COST ${cfr_cost})
    endif()
  endforeach()
endif()

# doctest cases of sched_tests and engine_tests: "name|label,label|Release s|address s|thread s".
# one_thread: every traversal runs on the calling thread (the recursive or interleaved scheduler,
#   tabular or hashed evaluators): no second thread, nothing for the thread sanitizer to find.
# convergence: a Leduc convergence curve (thousands of iterations) whose traversal code a short
#   case of the same executable runs too (ESCHER and external sampling on Kuhn, outcome sampling
#   against the plain implementation); the Release stage runs the curve, the address stage the
#   short case.
set(cfr_cases
  "ESCHER with tabular regrets and exact history values falls steadily on Leduc|sched,one_thread,convergence|5|73|237"
  "ESCHER's value trajectories: importance-weighted targets average to the exact q, plain returns to within ε|sched,one_thread|2|33|103"
  "coroutine outcome sampling with tabular regrets falls steadily on Leduc|sched,one_thread,convergence|1|16|63"
  "interleaved batches stay near the window and recursive batches are single requests|sched,one_thread|2|7|42"
  "coroutine external sampling with tabular regrets falls below NashConv 0.5 on Leduc|sched,one_thread,convergence|1|5|28"
  "a 1,000,000-node trajectory runs with the node cap disabled, in constant frame memory|sched,one_thread|1|3|10"
  "outcome sampling equals a plain recursive implementation: reference defaults|sched,one_thread|0|1|4"
  "outcome sampling equals the plain implementation with every option changed|sched,one_thread|0|1|2"
  "coroutine external sampling with tabular regrets reaches NashConv 0.05 on Kuhn|sched,one_thread|0|0|1"
  "ESCHER with tabular regrets and exact history values reaches NashConv 0.05 on Kuhn|sched,one_thread|0|0|1"
  "a job's share of the traversals (first_index) reproduces those traversals of the whole job, in order|sched|1|5|26"
  "every scheduler produces bitwise identical Lost Cities samples whatever its window, threads or batch limit|sched|1|7|54"
  "every scheduler produces identical samples with the network opponent and uniform fallback|sched|1|5|32"
  "stopping mid-run ends every scheduler early, leaking nothing|sched|1|3|18"
  "a sink exception ends every scheduler's run cleanly with its cause|sched|0|1|8"
  "a traversal exception ends every scheduler's run cleanly with its cause|sched|0|1|6"
  "resample_hidden keeps the opponent's known cards in their slots and shuffles the rest|engine|1|15|0"
  "Lost Cities with the default rules passes the conformance suite|engine|2|13|0"
  "Lost Cities passes the conformance suite on random valid rule sets|engine|2|13|0")
set(cfr_script "# Generated by tests/ci_schedule.cmake: labels and COST of single doctest cases.\n")
foreach(entry IN LISTS cfr_cases)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 cfr_name)
  list(GET entry 1 cfr_labels)
  string(REPLACE "," ";" cfr_labels "${cfr_labels}")
  math(EXPR cfr_i "1 + ${cfr_cost_column}")
  list(GET entry ${cfr_i} cfr_cost)
  string(APPEND cfr_script "set_tests_properties([==[${cfr_name}]==] PROPERTIES LABELS \"${cfr_labels}\"")
  if(cfr_cost GREATER 0)
    string(APPEND cfr_script " COST ${cfr_cost}")
  endif()
  string(APPEND cfr_script ")\n")
endforeach()
set(cfr_cases_file ${CMAKE_CURRENT_BINARY_DIR}/ci_doctest_cases.cmake)
file(WRITE ${cfr_cases_file} "${cfr_script}")
# Read by CTest after doctest_discover_tests' own files (appended after theirs): the cases exist.
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${cfr_cases_file})
