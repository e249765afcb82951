# Hardening (docs/reliability.md): input files that are not readable regular files, checkpoints
# that prove themselves, stops that stop at Lost Cities size, resumes that say what they are.
# Included from tests/CMakeLists.txt (expect_error, data and the run fixtures come from there).

# A directory, a missing file or a file where the other is expected: exit 2 naming the path.
cfr_expect_error(files.exploit_refuses_a_directory "data: is a directory, not a file"
  $<TARGET_FILE:cfr-exploit> ${data})
cfr_expect_error(files.arena_replay_refuses_a_directory "data: is a directory, not a file"
  $<TARGET_FILE:cfr-arena> --replay ${data})
cfr_expect_error(files.arena_parse_error_is_bad_input "cfr-arena: error: .*--games.*"
  $<TARGET_FILE:cfr-arena> --bot0 random --bot1 random --games abc)
cfr_expect_error(files.solve_unknown_flag_is_bad_input "cfr-solve: error: The following argument was not expected: --gmae"
  $<TARGET_FILE:cfr-solve> --game kuhn --algo cfr --gmae)

if(CFR_WITH_TORCH)
  set(robust_dirs run_files_fs run_stop_training run_stop_evaluation run_stop_second run_integrity resume_report)
  list(TRANSFORM robust_dirs PREPEND ${CMAKE_CURRENT_BINARY_DIR}/)
  add_test(NAME robust.clean_dirs COMMAND ${CMAKE_COMMAND} -E rm -rf ${robust_dirs})
  set_tests_properties(robust.clean_dirs PROPERTIES FIXTURES_SETUP robust_clean)

  cfr_expect_error(files.run_refuses_a_directory_as_config "config.*data: is a directory, not a file|data: is a directory, not a file"
    $<TARGET_FILE:cfr-run> ${data})
  cfr_expect_error(files.run_resume_refuses_a_file "--resume .*smoke.toml: not a directory"
    $<TARGET_FILE:cfr-run> --resume ${PROJECT_SOURCE_DIR}/configs/smoke.toml)
  cfr_expect_error(files.eval_refuses_a_file "smoke.toml: not a directory"
    $<TARGET_FILE:cfr-eval> ${PROJECT_SOURCE_DIR}/configs/smoke.toml)
  # A run directory under a regular file: a filesystem error the user caused, not an internal one.
  cfr_expect_error(files.run_dir_under_a_file_is_bad_input "cfr-run: error: .*smoke.toml/run: Not a directory"
    $<TARGET_FILE:cfr-run> ${PROJECT_SOURCE_DIR}/configs/kuhn.toml --run-dir ${PROJECT_SOURCE_DIR}/configs/smoke.toml/run)
  set_tests_properties(files.run_refuses_a_directory_as_config files.run_resume_refuses_a_file files.eval_refuses_a_file
    files.run_dir_under_a_file_is_bad_input PROPERTIES LABELS torch)

  # Flipped bytes in the middle of each checkpoint file are refused by name; nothing is changed.
  add_test(NAME checkpoint.flipped_bytes_in_each_file_are_refused_by_name
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_checkpoint_integrity.py $<TARGET_FILE:cfr-run> $<TARGET_FILE:cfr-eval>
            ${CMAKE_CURRENT_BINARY_DIR}/run_resume_a ${CMAKE_CURRENT_BINARY_DIR}/run_integrity)
  set_tests_properties(checkpoint.flipped_bytes_in_each_file_are_refused_by_name PROPERTIES LABELS torch TIMEOUT 240
    FIXTURES_REQUIRED "resume_a;robust_clean")

  # SIGTERM during training and evaluation at Lost Cities size (3×512 networks), and a second
  # signal: exits promptly, the latest checkpoint is the last completed iteration and loads.
  set(stop_lc ${PROJECT_SOURCE_DIR}/configs/default.toml --set traversal.traversals_per_player=4
      --set memory.advantage_capacity=100000 --set memory.strategy_capacity=100000)
  foreach(mode training evaluation second)
    add_test(NAME run.sigterm_during_${mode}_lost_cities
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_stop.py ${mode} $<TARGET_FILE:cfr-run> $<TARGET_FILE:cfr-eval>
              ${CMAKE_CURRENT_BINARY_DIR}/run_stop_${mode} -- ${stop_lc})
    set_tests_properties(run.sigterm_during_${mode}_lost_cities PROPERTIES LABELS torch TIMEOUT 240
      FIXTURES_REQUIRED robust_clean)
  endforeach()

  # Resume: each part's config kept, changed training keys refused unless allowed, "exact" stated.
  add_test(NAME run.resume_states_whether_it_is_exact
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_resume.py $<TARGET_FILE:cfr-run> ${CMAKE_CURRENT_BINARY_DIR}/resume_report --
            ${small_kuhn})
  set_tests_properties(run.resume_states_whether_it_is_exact PROPERTIES LABELS torch TIMEOUT 240 FIXTURES_REQUIRED robust_clean)
endif()
