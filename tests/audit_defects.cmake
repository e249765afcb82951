# Defects of a read-only audit (shell and script injection, escaping, resume, replay limits), each
# a case of tests/check_audit_defects.py that fails without its fix. Included from
# tests/CMakeLists.txt (cfr_expect_output, cfr_expect_error and data come from there).
set(audit_check ${CMAKE_CURRENT_SOURCE_DIR}/check_audit_defects.py)

# cfr-plot: metrics keys and a run directory's name are data in the gnuplot script, never commands
# (gnuplot's or a shell's).
cfr_expect_output(audit.plot_runs_no_command_from_metrics_keys_or_paths "ok: plot_injection: exit 0 twice, no marker file"
  ${audit_check} plot_injection $<TARGET_FILE_DIR:cfr-plot> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_plot_injection)
set_tests_properties(audit.plot_runs_no_command_from_metrics_keys_or_paths PROPERTIES LABELS apps)

if(CFR_WITH_TORCH)
  # cfr-run --resume without checkpoints/latest but with iter-* checkpoints: refused naming both,
  # nothing changed (it restarted from iteration 1, dropping every metrics line and snapshot).
  cfr_expect_output(audit.resume_without_latest_is_refused_and_keeps_metrics
    "ok: resume_no_latest: exit 2 naming latest and iter-000003; 3 metrics lines and 3 snapshots kept"
    ${audit_check} resume_no_latest $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_resume_no_latest)
  # An invalid metrics line before the last: exit 2 naming it (it was dropped silently).
  cfr_expect_output(audit.resume_refuses_an_invalid_metrics_line_by_number "ok: metrics_bad_line: exit 2 naming metrics.jsonl:2"
    ${audit_check} metrics_bad_line $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_metrics_bad_line)
  set_tests_properties(audit.resume_without_latest_is_refused_and_keeps_metrics
    audit.resume_refuses_an_invalid_metrics_line_by_number PROPERTIES LABELS "apps;torch" TIMEOUT 300)
endif()

# cfr-arena --replay: an integer that does not fit in 32 bits is refused naming the field and the
# value (a deck id of 2^32 + 14 was read as 14 and the game accepted); a gzip file that expands
# past 256 MiB is refused naming the limit (it was read whole into memory).
cfr_expect_error(audit.replay_refuses_a_deck_id_beyond_32_bits
  "replay_deck_id_overflow.jsonl:1: deck.0. = 4294967310 is out of range .a 32-bit integer."
  $<TARGET_FILE:cfr-arena> --replay ${data}/replay_deck_id_overflow.jsonl --quiet)
cfr_expect_output(audit.replay_refuses_a_gzip_file_past_256_mib "ok: replay_gzip_cap: exit 2 naming the 256 MiB limit"
  ${audit_check} replay_gzip_cap $<TARGET_FILE_DIR:cfr-arena> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_replay_gzip_cap)
set_tests_properties(audit.replay_refuses_a_deck_id_beyond_32_bits audit.replay_refuses_a_gzip_file_past_256_mib
  PROPERTIES LABELS "apps;arena")

if(CFR_WITH_TORCH)
  # Deep CFR with checkpoint.keep_snapshots: a resume without one of the snapshots it goes on from
  # is refused naming the file (it averaged the others), as MMD's snapshot opponents are.
  cfr_expect_output(audit.resume_refuses_a_missing_advantage_snapshot "ok: snapshots_missing: exit 2 naming snapshots/iter-000002.bin"
    ${audit_check} snapshots_missing $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_snapshots_missing)
  set_tests_properties(audit.resume_refuses_a_missing_advantage_snapshot PROPERTIES LABELS "apps;torch" TIMEOUT 300)
endif()

if(CFR_WITH_TORCH)
  # cfr-export writes into a fresh temporary folder of its own (OUT.tmp-XXXXXX): a user's folder
  # OUT.tmp beside OUT, a user's file manifest.json.tmp in OUT and a source run named OUT.tmp are
  # kept (the old OUT.tmp was emptied first, deleting them).
  cfr_expect_output(audit.export_keeps_a_users_out_tmp_folder_and_file
    "ok: export_tmp_kept: exit 0 three times. a.tmp/keep, a/manifest.json.tmp and the source b.tmp kept"
    ${audit_check} export_tmp_kept $<TARGET_FILE_DIR:cfr-export> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_export_tmp_kept)
  set_tests_properties(audit.export_keeps_a_users_out_tmp_folder_and_file PROPERTIES LABELS "apps;export")
endif()

# A floating-point flag refuses nan and inf naming the flag (CLI11's Range lets NaN through: it
# cast to 2^63 bytes of player log, or to 0 ns budgets).
cfr_expect_error(audit.arena_refuses_a_nan_player_log_mib "--player-log-mib: Value nan is not a finite number"
  $<TARGET_FILE:cfr-arena> --bot0 random --bot1 random --games 2 --player-log-mib nan)
cfr_expect_error(audit.arena_refuses_an_infinite_move_timeout "--move-timeout: Value inf is not a finite number"
  $<TARGET_FILE:cfr-arena> --bot0 random --bot1 random --games 2 --move-timeout inf)
set_tests_properties(audit.arena_refuses_a_nan_player_log_mib audit.arena_refuses_an_infinite_move_timeout
  PROPERTIES LABELS "apps;arena")
cfr_expect_error(audit.serve_refuses_a_nan_move_budget "--move-budget: Value nan is not a finite number"
  $<TARGET_FILE:cfr-serve> --port 0 --move-budget nan)
cfr_expect_error(audit.serve_refuses_nan_idle_minutes "--idle-minutes: Value nan is not a finite number"
  $<TARGET_FILE:cfr-serve> --port 0 --idle-minutes nan)
# Before the fix the server started and served on: a short timeout ends it.
set_tests_properties(audit.serve_refuses_a_nan_move_budget audit.serve_refuses_nan_idle_minutes PROPERTIES LABELS "apps;serve"
  TIMEOUT 30)

# cfr-ladder --svg: player names and the title are XML-escaped (a spec holds '&').
cfr_expect_output(audit.ladder_svg_escapes_player_names "ok: ladder_svg_names: exit 0, the SVG parses"
  ${audit_check} ladder_svg_names $<TARGET_FILE_DIR:cfr-ladder> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_ladder_svg_names)
# cfr-ladder checks --json and --svg before the first game (they failed after the whole round robin).
cfr_expect_output(audit.ladder_checks_output_paths_before_any_game "ok: ladder_paths: exit 2 naming --json's missing folder and --svg's directory, before any game"
  ${audit_check} ladder_paths $<TARGET_FILE_DIR:cfr-ladder> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_ladder_paths)
set_tests_properties(audit.ladder_svg_escapes_player_names audit.ladder_checks_output_paths_before_any_game
  PROPERTIES LABELS "apps;ladder")

# bench/strength_sweep.sh refuses a variant name that is empty, '.', '..' or holds '/', and an
# argument without '=', before anything runs (its `rm -rf OUT/NAME` deleted OUT or the folder
# above it).
if(CFR_WITH_TORCH)  # cfr-run's folder
  cfr_expect_output(audit.strength_sweep_refuses_bad_variant_names "ok: sweep_names: exit 2 naming each of 5 bad arguments"
    ${audit_check} sweep_names $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_sweep_names)
  set_tests_properties(audit.strength_sweep_refuses_bad_variant_names PROPERTIES LABELS apps)
endif()

# bench/scaling.sh CONFIG (one argument) reads CONFIG from the current directory and removes its
# temporary folder; bench/search_strength.sh keeps OUT until its matches are done.
if(CFR_WITH_TORCH)  # cfr-run's folder
  cfr_expect_output(audit.scaling_takes_one_argument_and_cleans_up "ok: scaling_one_arg: exit 2 naming the config read from the current directory"
    ${audit_check} scaling_one_arg $<TARGET_FILE_DIR:cfr-run> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_scaling_one_arg)
  set_tests_properties(audit.scaling_takes_one_argument_and_cleans_up PROPERTIES LABELS apps)
endif()
cfr_expect_output(audit.search_strength_keeps_out_on_failure "ok: search_strength_out: exit [0-9]+, .* as it was, nothing left behind"
  ${audit_check} search_strength_out $<TARGET_FILE_DIR:cfr-arena> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_search_strength_out)
set_tests_properties(audit.search_strength_keeps_out_on_failure PROPERTIES LABELS apps)
