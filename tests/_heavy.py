# ruff: noqa: E501  (node ids are data: one a line, unsplit, so that grep finds them)
"""The slowest tests of the default kind (C or C++ builds, subprocesses, CasADi graphs of large
models, operation counts, many random trees): they run under ``-m slow`` (CI's
``pytest -m slow``, and its run under the oldest pin selects ``heavy`` too), not in the README's
``pytest``.  ``tests/conftest.py`` marks them; docs/testing.md says which suite checks what.

An entry is a test's node id (one parameter set), a test function (all its parameter sets) or a
whole file; the value says why it is heavy.  Chosen by measurement (``--durations`` and each
test's CPU time, with an empty compile cache): the default suite keeps one small library of
each generated-code path (tests/test_codegen_simd.py, test_codegen_vjp.py,
test_codegen_chunks.py's chunk of 7).
"""

BUILDS_C = "builds C libraries of its own (the generated code of a larger tree, or several)"
ATLAS_C = "compiles Atlas's generated code at -O3"
BRIDGE = "runs `pvosimr validate` in a subprocess, building the C++ bridge to Pinocchio on the way"
NUMERIC = "seconds of numpy or CasADi work (many random trees, deep chains or a whole study)"
SUBPROCESS = "runs a command or a snippet in a fresh interpreter that compiles"
ATLAS = "Atlas with closed loops: seconds per case"
SLOWEST = "CasADi graphs, operation counts or zoo robots: the slowest of the default kind, measured"
PV_CPP = (
    "calls Pinocchio's C++ PV-OSIMr through the bridge: the first such test in a session builds"
    " it (a minute of C++ against Pinocchio's headers)"
)
ATLAS_SX = "CasADi graphs of Atlas (nv = 36), or PV-OSIMh pricing its plans: seconds each"

EXPORT = "builds an export three times (its stack check, the Python library, the test program)"
EMITTER = "the emitter (the way into XLA measured against the seam, not the route): JAX eager"
FRONT = "JAX or PyTorch tracing and compiling its own computations: a second or more each"

_CODEGEN = "tests/test_codegen.py::"
_BATCH = "tests/test_codegen_batch.py"
_DEEP = "tests/test_deep_chains.py::test_deep_chain_every_algorithm_matches_dense_truth"
_SX_ATLAS = "tests/test_symbolic.py::test_sx_function_equals_numpy_on_atlas"
_OSIMH_COUNTS = "tests/test_pv_osimh.py::test_casadi_counts_never_above_pv_osim_or_pv_osimr"
_REF = "tests/test_reference.py::"
_VAL = "tests/test_validation.py::"
_ROW = "tests/test_loop_closures.py::test_the_report_section_and_the_validate_row_pass"
_ZOO = "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth"
_OUTLINED_DEEP = "tests/test_outlined.py::test_outlined_deep_chains_match_the_dense_truth"

HEAVY: dict[str, str] = {
    # the generated code: one small library of each path stays in the default suite
    _BATCH: BUILDS_C,
    "tests/test_bench.py": "runs the bench's tiny plan: eight libraries of generated code",
    "tests/test_bench_crossover.py::test_every_route_is_checked_and_timed_per_configuration": (
        BUILDS_C
    ),
    "tests/test_bench_crossover.py::test_report_records_and_figure": BUILDS_C,
    "tests/test_accuracy.py::test_small_study_every_path_within_tolerance_and_reported": BUILDS_C,
    _CODEGEN + "test_matches_numpy_on_every_joint_type": BUILDS_C,
    _CODEGEN + "test_the_callers_subnormal_numbers_come_back": BUILDS_C,
    _CODEGEN + "test_cache_is_reused_without_running_the_compiler": BUILDS_C,
    _CODEGEN + "test_a_moved_constraint_is_new_source": BUILDS_C,
    _CODEGEN + "test_bad_q_raises": BUILDS_C,
    _CODEGEN + "test_binding_is_the_extension_where_headers_exist": BUILDS_C,
    _CODEGEN + "test_a_slow_step_says_what_it_is_doing": BUILDS_C,
    _CODEGEN + "test_an_uncreatable_cache_folder_is_named_with_its_variable": BUILDS_C,
    _CODEGEN + "test_mimic_gripper_compiles_to_the_numpy_matrix": BUILDS_C,
    _CODEGEN + "test_a_truncated_library_is_set_aside_and_rebuilt": SUBPROCESS,
    _CODEGEN + "test_matches_numpy_on_atlas_feet_6d": ATLAS_C,
    _CODEGEN + "test_bad_q_raises_on_atlas": ATLAS_C,
    _CODEGEN + "test_threads_get_their_own_work_arrays": ATLAS_C,
    "tests/test_codegen_chunks.py::test_chunked_code_runs_on_fused_multiply_adds": BUILDS_C,
    "tests/test_codegen_vjp.py::test_vjp_through_ctypes_and_with_placements": BUILDS_C,
    "tests/test_constraint_kinds.py::test_compiled": BUILDS_C,
    "tests/test_joint_types.py::test_tilted_axis_compiled": BUILDS_C,
    # whole commands in a subprocess
    "tests/test_cli.py::test_zoo_wide_validate_writes_to_pvosimr_report_not_the_committed_report": (
        BRIDGE
    ),
    "tests/test_loop_closures.py::test_the_report_section_and_the_validate_row_pass"
    "[four_bar-coupler_rocker_3d]": BRIDGE,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/counting.md-0]": SUBPROCESS,
    # numbers
    "tests/test_batch.py::test_random_trees_with_every_joint_type": NUMERIC,
    "tests/test_constraint_models.py::test_every_model_numpy_and_batch": NUMERIC,
    "tests/test_property_trees.py::test_random_trees_fast_subset": NUMERIC,
    "tests/test_outlined.py::test_outlined_g_equals_the_inline_graph": NUMERIC,
    _OUTLINED_DEEP + "[FreeFlyer-40]": NUMERIC,
    _OUTLINED_DEEP + "[Spherical-80]": NUMERIC,
    _DEEP + "[FreeFlyer-40]": NUMERIC,
    _DEEP + "[Spherical-80]": NUMERIC,
    "tests/test_numpy_speed.py::test_the_one_dof_step_is_the_generic_one": NUMERIC,
    "tests/test_figures.py::test_sweep_figures_have_ratio_panels[fig3-divisors0]": NUMERIC,
    "tests/test_figures.py::test_sweep_figures_have_ratio_panels[fig4-divisors1]": NUMERIC,
    "tests/test_validate_mujoco.py::test_the_report_has_the_three_engines": NUMERIC,
    "tests/test_validate_mujoco.py::test_an_mjcf_file_alone_is_validated_against_mujoco": NUMERIC,
    "tests/test_damped.py::test_damped_inverse_on_random_trees": NUMERIC,
    "tests/test_plotting.py::test_accuracy_figure_from_its_json": NUMERIC,
    "tests/test_symbolic.py::test_symbolic_kinematics_match_pinocchio_for_every_joint_type": (
        NUMERIC
    ),
    "tests/test_convention.py::test_each_half_of_the_convention_adds_arithmetic": NUMERIC,
    "tests/test_convention.py::test_scale_counts_are_the_four_variants_of_the_stem": NUMERIC,
    "tests/test_choice.py::test_every_failed_timing_falls_back_on_the_fewest_operations": NUMERIC,
    "tests/test_choice.py::test_the_casadi_path_takes_the_fewest_operations": NUMERIC,
    "tests/test_agreement.py::test_sample_humanoid_with_mixed_constraints_at_random_placements": (
        NUMERIC
    ),
    "tests/test_trees_and_truth.py::test_dense_matches_pinocchio_on_random_trees": NUMERIC,
    "tests/test_trees_and_truth.py::test_generated_mass_matrices_are_spd": NUMERIC,
    # Atlas holding a box: a closed loop per hand
    "tests/test_loop_closures.py::test_pinocchio_is_silently_wrong_on_each_case"
    "[atlas_holding_box-hands_6d_feet_4x3d_lwa]": ATLAS,
    "tests/test_loop_closures.py::test_pinocchio_is_silently_wrong_on_each_case"
    "[atlas_holding_box-hands_6d_lwa_feet_4x3d_lwa]": ATLAS,
    "tests/test_loop_closures.py::test_pvosimr_agrees_with_getconstraintjacobian"
    "[pv-osimh-atlas_holding_box-hands_6d_feet_4x3d_lwa]": ATLAS,
    "tests/test_loop_closures.py::test_pvosimr_agrees_with_getconstraintjacobian"
    "[pv-osimh-atlas_holding_box-hands_6d_lwa_feet_4x3d_lwa]": ATLAS,
    "tests/test_loop_closures.py::test_the_report_section_and_the_validate_row_pass"
    "[atlas_holding_box-hands_6d_feet_4x3d_lwa]": ATLAS,
    "tests/test_loop_closures.py::test_the_report_section_and_the_validate_row_pass"
    "[atlas_holding_box-hands_6d_lwa_feet_4x3d_lwa]": ATLAS,
    # CasADi on Atlas
    "tests/test_pv_osimh.py::test_auto_names_its_choice_in_the_casadi_function": ATLAS_SX,
    _OSIMH_COUNTS + "[chain_welded_every_link_n8-None-True]": ATLAS_SX,
    _OSIMH_COUNTS + "[stem_b2_L10-None-False]": ATLAS_SX,
    _OSIMH_COUNTS + "[atlas-feet_4x3d-True]": ATLAS_SX,
    "tests/test_symbolic_inputs.py::test_gradient_is_the_contraction_of_derivatives_on_atlas": (
        ATLAS_SX
    ),
    "tests/test_symbolic_inputs.py::test_atlas_with_placements_as_input[feet_4x3d-pv-osimh]": (
        ATLAS_SX
    ),
    "tests/test_symbolic_inputs.py::test_derivatives_on_atlas[feet_6d]": ATLAS_SX,
    _SX_ATLAS + "[pv-osimh-feet_4x3d]": ATLAS_SX,
    _SX_ATLAS + "[pv-osimh-hands_feet_6d]": ATLAS_SX,
    "tests/test_symbolic.py::test_operation_counts_on_atlas_are_of_q_to_g": ATLAS_SX,
    "tests/test_validation.py::test_demo_prints_the_table_for_the_papers_robots": ATLAS_SX,
    _ZOO + "[atlas_shadow_hand]": ATLAS_SX,
    _ZOO + "[atlas]": ATLAS_SX,
    "tests/test_batch.py::test_atlas_every_preset_and_algorithm[feet_4x3d]": ATLAS_SX,
    # Pinocchio's C++ PV-OSIMr (the bridge)
    "tests/test_bridge.py::test_built_against_the_pin_in_use": PV_CPP,
    "tests/test_bridge.py::test_cache_name_changes_with_pin_and_compiler": PV_CPP,
    "tests/test_bridge.py::test_no_compiler_a_clear_error_and_everything_else_works": PV_CPP,
    "tests/test_bridge.py::test_validate_without_the_bridge_reports_it_and_still_judges": PV_CPP,
    "tests/test_bridge.py::test_validate_command_says_the_bridge_did_not_run": PV_CPP,
    "tests/test_bridge.py::test_an_uncreatable_cache_folder_is_named_with_its_variable": PV_CPP,
    _REF + "test_random_trees": PV_CPP,
    _REF + "test_pinocchio_vector_and_tuple_accepted": PV_CPP,
    _REF + "test_structures_pv_osimr_bookkeeping_must_handle": PV_CPP,
    _REF + "test_shadow_hand_fingertips": PV_CPP,
    _REF + "test_sample_humanoid_redundant_contacts": PV_CPP,
    _REF + "test_sample_humanoid_mixed_contacts": PV_CPP,
    _REF + "test_registry": PV_CPP,
    _REF + "test_pv_has_no_state_across_calls": PV_CPP,
    _REF + "test_init_pv_delassus_runs_once_per_constraint_list": PV_CPP,
    _REF + "test_damped_inverse_defect_skips_the_out_of_bounds_case": PV_CPP,
    _REF + "test_damped_inverse_defect_is_visible": PV_CPP,
    _REF + "test_compiled_object_checks_its_input": PV_CPP,
    _REF + "test_cholesky_refuses_a_zero_pivot": PV_CPP,
    _REF + "test_atlas_hands_and_feet_6d": PV_CPP,
    _REF + "test_atlas_feet_6d": PV_CPP,
    _VAL + "test_missing_optional_model": PV_CPP,
    _VAL + "test_report_carries_the_accuracy_study_summary": PV_CPP,
    _VAL + "test_validate_writes_a_passing_report": PV_CPP,
    _VAL + "test_the_report_tells_refusals_from_disagreements": PV_CPP,
    _VAL + "test_robots_take_robot_or_robot_slash_preset": PV_CPP,
    _VAL + "test_a_wrong_number_on_newer_joint_types_fails": PV_CPP,
    _VAL + "test_a_wrong_algorithm_fails_the_run": PV_CPP,
    _VAL + "test_a_refusal_fails_the_run": PV_CPP,
    _VAL + "test_a_file_run_writes_its_report_where_out_says": PV_CPP,
    _VAL + "test_the_table_says_why_a_reference_is_refused": PV_CPP,
    _VAL + "test_mimic_file_is_validated": PV_CPP,
    _VAL + "test_an_error_from_cpp_is_not_a_pvosimr_refusal": PV_CPP,
    _VAL + "test_a_urdf_file_runs_every_method_against_the_truth": PV_CPP,
    _VAL + "test_errors_name_the_problem[argv10-the mass matrix is not positive definite]": PV_CPP,
    "tests/test_validate_mujoco.py::test_a_wrong_mujoco_matrix_is_a_disagreement": PV_CPP,
    "tests/test_validate_mujoco.py::test_zoo_cases_by_name": PV_CPP,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/validation.md-0]": PV_CPP,
    _ROW + "[four_bar-coupler_rocker_3d_lwa]": PV_CPP,
    _ROW + "[cassie_leg-rods_3d]": PV_CPP,
    _ROW + "[cassie_leg-rods_3d_toe_2x3d_lwa]": PV_CPP,
    # the slowest of the rest, measured with a warm cache
    "tests/test_agreement.py::test_atlas[feet_4x3d]": SLOWEST,
    "tests/test_agreement.py::test_atlas[hands_feet_6d]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[bravo7_gripper]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[panda]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[romeo]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[talos]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[tiago]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[ur5]": SLOWEST,
    "tests/test_batch.py::test_batched_kinematics_match_pinocchio_for_every_joint_type": SLOWEST,
    "tests/test_batch.py::test_shadow_hand_every_algorithm": SLOWEST,
    "tests/test_choice.py::test_the_choice_is_made_once_per_topology_and_path[casadi]": SLOWEST,
    "tests/test_cli.py::test_every_help_prints_without_an_optional_module[matplotlib]": SLOWEST,
    "tests/test_cli.py::test_every_help_prints_without_an_optional_module[tqdm]": SLOWEST,
    "tests/test_cli.py::test_the_installed_command_shows_no_traceback[argv0]": SLOWEST,
    "tests/test_cli.py::test_the_installed_command_shows_no_traceback[argv1]": SLOWEST,
    "tests/test_codegen.py::test_compiling_says_what_where_and_with_which_flags": SLOWEST,
    "tests/test_constraint_kinds.py::test_casadi_function[0]": SLOWEST,
    "tests/test_constraint_kinds.py::test_casadi_function[15]": SLOWEST,
    "tests/test_constraint_kinds.py::test_casadi_function[2]": SLOWEST,
    "tests/test_constraint_kinds.py::test_casadi_function[4]": SLOWEST,
    "tests/test_constraint_kinds.py::test_every_algorithm_numpy_and_batch[4]": SLOWEST,
    "tests/test_constraint_kinds.py::test_every_algorithm_numpy_and_batch[7]": SLOWEST,
    "tests/test_constraint_models.py::test_every_model_casadi[0]": SLOWEST,
    "tests/test_constraint_models.py::test_every_model_casadi[1]": SLOWEST,
    "tests/test_constraint_models.py::test_every_model_casadi[2]": SLOWEST,
    "tests/test_cost.py::test_bodies_counted_on_one_counter_are_counted_alone": SLOWEST,
    "tests/test_cost.py::test_bodies_sharing_results_are_counted_alone[chain_welded_every_k_k4-welds_6d]": SLOWEST,
    "tests/test_cost.py::test_cheapest_is_within_five_percent_of_the_best_count[chain_welded_every_k_k4-welds_6d]": SLOWEST,
    "tests/test_cost.py::test_cheapest_is_within_five_percent_of_the_best_count[panda_mimic-fingers_3d]": SLOWEST,
    "tests/test_cost.py::test_cheapest_is_within_five_percent_of_the_best_count[panda_mimic-tool_6d]": SLOWEST,
    "tests/test_cost.py::test_cheapest_is_within_five_percent_of_the_best_count[shadow_hand-fingertips_3d]": SLOWEST,
    "tests/test_cost.py::test_cheapest_is_within_five_percent_of_the_best_count[xarm7-tool_6d]": SLOWEST,
    "tests/test_cost.py::test_estimate_is_close_to_the_count[chain_welded_every_k_k4-welds_6d]": SLOWEST,
    "tests/test_cost.py::test_estimate_is_close_to_the_count[panda_mimic-fingers_3d]": SLOWEST,
    "tests/test_cost.py::test_estimate_is_close_to_the_count[panda_mimic-tool_6d]": SLOWEST,
    "tests/test_cost.py::test_estimate_is_close_to_the_count[shadow_hand-fingertips_3d]": SLOWEST,
    "tests/test_cost.py::test_estimate_is_close_to_the_count[xarm7-tool_6d]": SLOWEST,
    "tests/test_cost.py::test_pv_osimh_plans_on_the_constraints_placements": SLOWEST,
    "tests/test_cost.py::test_the_cost_model_runs_without_casadi": SLOWEST,
    "tests/test_count_cli.py::test_urdf_file_with_free_flyer_matches_the_api": SLOWEST,
    "tests/test_count_cli.py::test_zoo_robot_with_preset_matches_the_api": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[README.md-0]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/mujoco.md-0]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/mujoco.md-1]": SLOWEST,
    "tests/test_figures.py::test_bar_figures_set_pvosimh_apart_with_thousands_separators": SLOWEST,
    "tests/test_joint_types.py::test_every_default_type_in_one_tree_agrees_with_the_truth": SLOWEST,
    "tests/test_joint_types.py::test_random_joints_cover_every_type_and_nest_composites": SLOWEST,
    "tests/test_loop_closures.py::test_pinocchio_is_silently_wrong_on_each_case[cassie_leg-rods_3d_toe_2x3d_lwa]": SLOWEST,
    "tests/test_loop_closures.py::test_the_section_shows_every_case": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_casadi[0]": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_casadi[5]": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_every_algorithm_numpy_and_batch[9]": SLOWEST,
    "tests/test_numpy_speed.py::test_the_one_dof_step_is_the_generic_one_on_atlas[pv-osimh]": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[atlas/feet_4x3d]": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[atlas/feet_6d]": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[atlas/hands_feet_6d]": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[chain_welded_every_k/k4]": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[shadow_hand/fingertips_3d]": SLOWEST,
    "tests/test_pv_osimh.py::test_casadi_counts_never_above_pv_osim_or_pv_osimr[atlas-feet_6d-False]": SLOWEST,
    "tests/test_pv_osimh.py::test_casadi_counts_never_above_pv_osim_or_pv_osimr[atlas-hands_feet_6d-False]": SLOWEST,
    "tests/test_pv_osimh.py::test_casadi_counts_never_above_pv_osim_or_pv_osimr[shadow_hand-fingertips_3d-False]": SLOWEST,
    "tests/test_symbolic.py::test_sx_function_equals_numpy_on_atlas[naive-feet_4x3d]": SLOWEST,
    "tests/test_symbolic.py::test_sx_function_equals_numpy_on_atlas[naive-feet_6d]": SLOWEST,
    "tests/test_symbolic.py::test_sx_function_equals_numpy_on_atlas[naive-hands_feet_6d]": SLOWEST,
    "tests/test_symbolic.py::test_sx_function_equals_numpy_on_atlas[pv-osimh-feet_6d]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_atlas_with_placements_as_input[feet_6d-pv-osimh]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_derivatives_on_every_joint_type[universal_biped]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_gradient_is_contracted_differences_on_every_joint_type[chain of every kind]": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[cassie_leg]": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[panda_mimic]": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[stem_b2_L10]": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[talos]": SLOWEST,
    "tests/test_zoo_sources.py::test_erd_model_matches_example_robot_data[panda]": SLOWEST,
    "tests/test_zoo_sources.py::test_erd_model_matches_example_robot_data[talos]": SLOWEST,
    "tests/test_agreement.py::test_every_example_robot_data_robot[anymal_kinova]": SLOWEST,
    "tests/test_agreement.py::test_shadow_hand_fingertips": SLOWEST,
    "tests/test_batch.py::test_atlas_every_preset_and_algorithm[hands_feet_6d]": SLOWEST,
    "tests/test_cli.py::test_every_help_prints_without_an_optional_module[casadi]": SLOWEST,
    "tests/test_cli.py::test_figures_without_casadi_is_one_line_and_status_2": SLOWEST,
    "tests/test_cli.py::test_the_installed_command_shows_no_traceback[argv2]": SLOWEST,
    "tests/test_constraint_kinds.py::test_casadi_function[3]": SLOWEST,
    "tests/test_constraint_kinds.py::test_every_algorithm_numpy_and_batch[15]": SLOWEST,
    "tests/test_convention.py::test_dense_transforms_compute_the_same_delassus_matrix[efpa]": SLOWEST,
    "tests/test_convention.py::test_the_cache_counts_each_convention_apart": SLOWEST,
    "tests/test_count_cli.py::test_a_loop_closure_from_the_command_line": SLOWEST,
    "tests/test_damped.py::test_lanczos_bounds_hold[30]": SLOWEST,
    "tests/test_damped.py::test_lanczos_largest_can_be_below_lambda_max_by_more_than_its_residual": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/index.md-0]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/solvers.md-0]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/solvers.md-1]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/solvers.md-2]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/usage.md-0]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/usage.md-1]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/usage.md-2]": SLOWEST,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/usage.md-3]": SLOWEST,
    "tests/test_loop_closures.py::test_pvosimr_agrees_with_getconstraintjacobian[pv-osimh-cassie_leg-rods_3d_toe_2x3d_lwa]": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_every_algorithm_numpy_and_batch[0]": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_every_algorithm_numpy_and_batch[2]": SLOWEST,
    "tests/test_mimic.py::test_mimic_trees_every_algorithm_numpy_and_batch[8]": SLOWEST,
    "tests/test_numpy_speed.py::test_constant_subspaces_do_not_depend_on_q": SLOWEST,
    "tests/test_opcount_golden.py::test_operation_counts_equal_the_golden_numbers[random_tree/seed20240611]": SLOWEST,
    "tests/test_outlined.py::test_outlined_deep_chains_match_the_dense_truth[RZ-120]": SLOWEST,
    "tests/test_plotting.py::test_timings_figure_from_its_json": SLOWEST,
    "tests/test_pv_osimh.py::test_a_slow_first_choice_says_what_it_is_doing": SLOWEST,
    "tests/test_pv_osimh.py::test_the_rule_never_counts_more_than_either_extreme[2]": SLOWEST,
    "tests/test_pv_osimh.py::test_the_rule_never_counts_more_than_either_extreme[5]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_derivatives_with_placements_as_input[1]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_every_constraint_kind_with_placements_as_input[1]": SLOWEST,
    "tests/test_symbolic_inputs.py::test_two_body_and_world_aligned_atlas_with_placements_as_input": SLOWEST,
    "tests/test_trees_and_truth.py::test_constraint_jacobian_matches_frame_jacobian": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[anymal_kinova]": SLOWEST,
    "tests/test_zoo.py::test_every_robot_and_preset_agrees_with_the_dense_truth[chain_welded_every_k_k4]": SLOWEST,
    "tests/test_zoo.py::test_joint_type_robots_and_their_dense_truth[panda_mimic]": SLOWEST,
    "tests/test_zoo_sources.py::test_erd_model_matches_example_robot_data[solo12]": SLOWEST,
    "tests/test_zoo_sources.py::test_erd_model_matches_example_robot_data[ur5]": SLOWEST,
    # the front ends: one test of each path stays in the default suite
    "tests/test_export.py": EXPORT,
    "tests/test_jax.py::test_without_64_bit_mode_the_error_names_the_flag_and_import_leaves_it_off": SUBPROCESS,
    "tests/test_jax.py::test_without_jax_the_entry_point_says_what_to_install": SUBPROCESS,
    "tests/test_jax.py::test_vmap_of_grad_equals_a_python_loop": FRONT,
    "tests/test_jax.py::test_forward_mode_is_refused_in_one_line": FRONT,
    "tests/test_torch.py::test_the_xla_route_is_the_library_s_G_and_gradient": FRONT,
    "tests/test_jax.py::test_every_kind_of_unit_coordinates_on_and_off_the_sphere[every kind of joint]": BUILDS_C,
    "tests/test_jax.py::test_every_kind_of_unit_coordinates_on_and_off_the_sphere[1]": BUILDS_C,
    "tests/test_torch.py::test_every_kind_of_unit_coordinates_on_and_off_the_sphere": BUILDS_C,
    "tests/test_torch.py::test_opcheck_both_ops": FRONT,
    "tests/test_torch.py::test_without_torch_the_entry_point_says_what_to_install": SUBPROCESS,
    "tests/test_jax_seam.py::test_random_trees_against_numpy[0]": FRONT,
    "tests/test_jax_seam.py::test_random_trees_against_numpy[1]": FRONT,
    "tests/test_jax_seam.py::test_every_algorithm_on_a_random_tree[pv-osimr]": FRONT,
    "tests/test_jax_seam.py::test_every_algorithm_on_a_random_tree[pv-osimh]": FRONT,
    "tests/test_jax_seam.py::test_every_algorithm_on_a_random_tree[efpa]": FRONT,
    "tests/test_jax_seam.py::test_humanoid_constraint_kinds[pv-osimr]": FRONT,
    "tests/test_jax_seam.py::test_jit_vmap_both_transforms[chain]": FRONT,
    "tests/test_xla_builders.py::test_placements_as_inputs": FRONT,
    "tests/test_xla_builders.py::test_float32_is_close_to_float64": FRONT,
    "tests/test_xla_builders.py::test_gradient_and_jvp_are_the_compiled_ones": FRONT,
    "tests/test_xla_builders.py::test_gradient_has_no_radial_part": FRONT,
    "tests/test_xla_builders.py::test_bad_input_is_named": FRONT,
    "tests/test_xla_builders.py::test_no_constraint_rows[xla]": EMITTER,
    "tests/test_xla_builders.py::test_placements_input_needs_p[xla]": EMITTER,
    "tests/test_xla_route.py::test_route_xla_with_placements_as_entries": FRONT,
    "tests/test_xla_route.py::test_route_xla_is_the_xla_function": FRONT,
    "tests/test_jax.py::test_vmap_and_nested_vmap_equal_python_loops": FRONT,
    "tests/test_jax.py::test_import_pvosimr_imports_neither_jax_nor_torch": SUBPROCESS,
    "tests/test_docs.py::test_snippet_runs_as_written[docs/xla.md-0]": FRONT,
    "tests/test_xla.py": EMITTER,
}
