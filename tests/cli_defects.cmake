# Command-line defects of issue 28 item 6, each a test that fails without its fix
# (tests/check_cli_defects.py for what needs several commands). Included from tests/CMakeLists.txt
# (cfr_expect_output, cfr_expect_error, data and the run fixtures come from there).
set(cli_check ${CMAKE_CURRENT_SOURCE_DIR}/check_cli_defects.py)

# An empty transcript is bad input, not "replays 0 games: all consistent".
cfr_expect_error(cli.arena_replay_of_an_empty_file_is_bad_input "replay_empty.jsonl: no games in the transcript"
  $<TARGET_FILE:cfr-arena> --replay ${data}/replay_empty.jsonl --quiet)

# cfr-plot: a torn last line (no newline, invalid JSON) is skipped with a warning and the rest is
# drawn (two points per curve); an empty file, or one whose only line is torn, is "nothing to plot"
# (exit 2); an invalid line with its newline is still refused by its number.
cfr_expect_output(cli.plot_skips_a_torn_last_line
  "cfr-plot: warning: [^ ]*/plot_torn/metrics.jsonl:3: the last line is cut off.*cli_plots_torn/losses.png \\(3 curves\\)"
  $<TARGET_FILE:cfr-plot> ${data}/plot_torn --out ${CMAKE_CURRENT_BINARY_DIR}/cli_plots_torn)
cfr_expect_output(cli.plot_of_a_torn_last_line_draws_the_complete_ones "ok: 3 curves of 2 points"
  sh -c "test \"$(grep -c . ${CMAKE_CURRENT_BINARY_DIR}/cli_plots_torn/losses.dat)\" = 6 && echo 'ok: 3 curves of 2 points'")
set_tests_properties(cli.plot_of_a_torn_last_line_draws_the_complete_ones PROPERTIES DEPENDS cli.plot_skips_a_torn_last_line)
cfr_expect_error(cli.plot_of_an_empty_metrics_file_is_nothing_to_plot "plot_empty/metrics.jsonl: nothing to plot \\(the file is empty\\)"
  $<TARGET_FILE:cfr-plot> ${data}/plot_empty --out ${CMAKE_CURRENT_BINARY_DIR}/cli_plots_empty)
cfr_expect_error(cli.plot_of_a_lone_torn_line_is_nothing_to_plot "plot_only_torn/metrics.jsonl: nothing to plot \\(its only line is cut off\\)"
  $<TARGET_FILE:cfr-plot> ${data}/plot_only_torn --out ${CMAKE_CURRENT_BINARY_DIR}/cli_plots_only_torn)

# External players' stderr logs: never in the current directory.
cfr_expect_output(cli.external_player_logs_not_in_the_current_directory "ok: external_logs"
  ${cli_check} external_logs $<TARGET_FILE_DIR:cfr-arena> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_external_logs)

set_tests_properties(cli.arena_replay_of_an_empty_file_is_bad_input cli.plot_skips_a_torn_last_line
  cli.plot_of_a_torn_last_line_draws_the_complete_ones cli.plot_of_an_empty_metrics_file_is_nothing_to_plot
  cli.plot_of_a_lone_torn_line_is_nothing_to_plot cli.external_player_logs_not_in_the_current_directory
  PROPERTIES LABELS apps)

if(CFR_WITH_TORCH)
  # evaluation.games = 0: no "vs BOT 0.00" line and no evaluation in metrics.jsonl.
  cfr_expect_output(cli.run_without_evaluation_games_reports_no_evaluation "ok: no_eval"
    ${cli_check} no_eval $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_no_eval)
  # Two checkpoints told apart: each named as given, in cfr-arena's text and JSON and cfr-eval's
  # report, which also says the iteration it evaluated.
  set(cli_ck ${CMAKE_CURRENT_BINARY_DIR}/run_smoke/checkpoints/iter-000002)
  cfr_expect_output(cli.arena_names_each_checkpoint_as_given
    "\"bot0\":\"checkpoint:[^\"]*/run_smoke/checkpoints/iter-000002\",\"bot1\":\"checkpoint-sampled:[^\"]*/run_smoke\","
    $<TARGET_FILE:cfr-arena> --bot0 checkpoint:${cli_ck} --bot1 checkpoint-sampled:${CMAKE_CURRENT_BINARY_DIR}/run_smoke
    --games 2 --json)
  cfr_expect_output(cli.arena_text_names_each_checkpoint_as_given
    "checkpoint:[^ ]*/run_smoke/checkpoints/iter-000002 vs checkpoint-sampled:[^ ]*/run_smoke: 2 games"
    $<TARGET_FILE:cfr-arena> --bot0 checkpoint:${cli_ck} --bot1 checkpoint-sampled:${CMAKE_CURRENT_BINARY_DIR}/run_smoke
    --games 2)
  cfr_expect_output(cli.eval_names_the_checkpoint_and_its_iteration
    "\"bot0\":\"checkpoint:[^\"]*/run_smoke\",\"bot1\":\"checkpoint:[^\"]*/run_smoke/checkpoints/iter-000002\",\"checkpoint\":\"[^\"]*/run_smoke/checkpoints/iter-000002\",.*\"iteration\":2,"
    $<TARGET_FILE:cfr-eval> ${CMAKE_CURRENT_BINARY_DIR}/run_smoke --opponent checkpoint:${cli_ck} --games 2 --json)
  cfr_expect_output(cli.eval_text_says_the_iteration_evaluated
    "run_smoke: iteration 2 \\([^)]*/run_smoke/checkpoints/iter-000002\\).*checkpoint:[^ ]*/run_smoke vs random: 2 games"
    $<TARGET_FILE:cfr-eval> ${CMAKE_CURRENT_BINARY_DIR}/run_smoke --opponent random --games 2)
  # cfr-export onto an earlier export keeps the user's file.
  cfr_expect_output(cli.export_again_keeps_the_users_files "ok: export_keeps"
    ${cli_check} export_keeps $<TARGET_FILE_DIR:cfr-export> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_export)
  set_tests_properties(cli.arena_names_each_checkpoint_as_given cli.arena_text_names_each_checkpoint_as_given
    cli.eval_names_the_checkpoint_and_its_iteration cli.eval_text_says_the_iteration_evaluated
    cli.export_again_keeps_the_users_files PROPERTIES FIXTURES_REQUIRED smoke_plain)
  # cfr-eval RUN_DIR while the run trains (its checkpoints rotate every iteration): 30 in a row succeed.
  cfr_expect_output(cli.eval_during_training_evaluates_the_newest_complete_checkpoint "ok: eval_live"
    ${cli_check} eval_live $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_eval_live)
  # A full disk (a tmpfs in a private mount namespace: needs root; skipped, not passed, without).
  add_test(NAME cli.run_on_a_full_disk_is_bad_input_and_resumes
    COMMAND ${cli_check} disk_full $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_disk_full)
  set_tests_properties(cli.run_on_a_full_disk_is_bad_input_and_resumes PROPERTIES SKIP_RETURN_CODE 77)
  set_tests_properties(cli.run_without_evaluation_games_reports_no_evaluation cli.arena_names_each_checkpoint_as_given
    cli.arena_text_names_each_checkpoint_as_given cli.eval_names_the_checkpoint_and_its_iteration
    cli.eval_text_says_the_iteration_evaluated cli.export_again_keeps_the_users_files
    cli.eval_during_training_evaluates_the_newest_complete_checkpoint cli.run_on_a_full_disk_is_bad_input_and_resumes
    PROPERTIES LABELS "apps;torch" TIMEOUT 300)
endif()
