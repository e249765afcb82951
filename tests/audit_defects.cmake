# Defects of a read-only audit (shell and script injection, escaping, resume, replay limits), each
# a case of tests/check_audit_defects.py that fails without its fix. Included from
# tests/CMakeLists.txt (cfr_expect_output, cfr_expect_error and data come from there).
set(audit_check ${CMAKE_CURRENT_SOURCE_DIR}/check_audit_defects.py)

# cfr-plot: metrics keys and a run directory's name are data in the gnuplot script, never commands
# (gnuplot's or a shell's).
cfr_expect_output(audit.plot_runs_no_command_from_metrics_keys_or_paths "ok: plot_injection: exit 0 twice, no marker file"
  ${audit_check} plot_injection $<TARGET_FILE_DIR:cfr-plot> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/audit_plot_injection)
set_tests_properties(audit.plot_runs_no_command_from_metrics_keys_or_paths PROPERTIES LABELS apps)
