# Bad-input sweep (docs/reliability.md §7, tests/sweep_inputs.py): every app flag and every cfr-run
# config key tried with 0, -1, huge, empty, wrong-type and path-climbing values; each must exit 2
# naming the flag or key, or 0 where the value is legitimately valid. Each cfr-run, cfr-eval or
# cfr-bench-batch call spends ~0.9 s loading LibTorch before it reads its arguments, so the
# default suite sweeps every app's flags and the config keys go to the slow label (CI covers them
# with tests/apps/config_test.cc and the fuzz_config and fuzz_set targets).
set(sweep ${CMAKE_CURRENT_SOURCE_DIR}/sweep_inputs.py)
add_test(NAME sweep.bad_flags_exit_2_naming_the_flag
  COMMAND ${sweep} --only cfr-arena,cfr-solve,cfr-exploit,cfr-plot $<TARGET_FILE_DIR:cfr-arena>
          ${PROJECT_SOURCE_DIR}/configs ${CMAKE_CURRENT_BINARY_DIR}/sweep_flags)
set_tests_properties(sweep.bad_flags_exit_2_naming_the_flag PROPERTIES LABELS app TIMEOUT 300)
if(CFR_WITH_TORCH)
  add_test(NAME sweep.bad_flags_of_the_torch_apps_exit_2_naming_the_flag
    COMMAND ${sweep} --only cfr-eval,cfr-bench-batch $<TARGET_FILE_DIR:cfr-run>
            ${PROJECT_SOURCE_DIR}/configs ${CMAKE_CURRENT_BINARY_DIR}/sweep_torch_flags)
  set_tests_properties(sweep.bad_flags_of_the_torch_apps_exit_2_naming_the_flag PROPERTIES LABELS "app;torch" TIMEOUT 300)
  add_test(NAME sweep.every_config_key_and_cfr_run_flag
    COMMAND ${sweep} --only cfr-run $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR}/configs
            ${CMAKE_CURRENT_BINARY_DIR}/sweep_run)
  set_tests_properties(sweep.every_config_key_and_cfr_run_flag PROPERTIES LABELS "app;torch;slow" TIMEOUT 900)
endif()
