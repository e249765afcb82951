# Proof of no change (architecture issue): runs recorded before the training loop's refactor are
# reproduced bit for bit, with batch-invariant forwards (tests/golden/no_change/README.md).
if(CFR_WITH_TORCH)
  set(golden_dir ${CMAKE_CURRENT_SOURCE_DIR}/golden/no_change)
  set(invariant --set network.invariant_chunk=8)
  function(cfr_golden_run name)  # ARGN: the config and its --set options
    add_test(NAME golden.${name}_reproduces_the_recorded_run
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_golden_run.py ${golden_dir}/${name}.jsonl
              ${CMAKE_CURRENT_BINARY_DIR}/golden_${name} -- $<TARGET_FILE:cfr-run> ${ARGN} ${invariant})
    # The recordings were made with OpenBLAS's Haswell kernels (OPENBLAS_CORETYPE was set on that
    # machine); a machine that picks others (SkylakeX here) differs in the last bits of a loss.
    set_tests_properties(golden.${name}_reproduces_the_recorded_run PROPERTIES LABELS "torch;golden" TIMEOUT 240
                         ENVIRONMENT OPENBLAS_CORETYPE=Haswell)
  endfunction()
  cfr_golden_run(smoke ${PROJECT_SOURCE_DIR}/configs/smoke.toml)
  cfr_golden_run(kuhn ${PROJECT_SOURCE_DIR}/configs/kuhn.toml --set run.max_iterations=10)
  # Recorded before the quickstart took the best measured recipe: pinned to the recipe it had.
  cfr_golden_run(qs ${PROJECT_SOURCE_DIR}/configs/quickstart_deep_cfr.toml --set run.max_iterations=3
                 --set traversal.outcome_unsampled_regret=zero)
endif()
