# The include structure of core/ as a test: no include cycle between components, no include
# from a folder of core/ to one later in core/LAYERS (tools/check-layers.py), and the check's own
# self-test on synthetic trees; the parts of ui/ the same way (tools/check-ui-parts.py). Call
# ratescope_add_layer_check() after enable_testing().
# Skipped, with a note, where no Python 3 interpreter is found (the check needs only its
# standard library).
function(ratescope_add_layer_check)
    find_package(Python3 COMPONENTS Interpreter)
    if(NOT Python3_Interpreter_FOUND)
        message(STATUS "Python 3 not found: the core layer check (ctest core_layers) is not registered")
        return()
    endif()
    set(_script "${PROJECT_SOURCE_DIR}/tools/check-layers.py")
    add_test(NAME core_layers COMMAND "${Python3_EXECUTABLE}" "${_script}" "${PROJECT_SOURCE_DIR}/core")
    add_test(NAME core_layers_selftest COMMAND "${Python3_EXECUTABLE}" "${_script}" --selftest)
    set_tests_properties(core_layers PROPERTIES LABELS core TIMEOUT 60)
    set_tests_properties(core_layers_selftest PROPERTIES LABELS tools TIMEOUT 120)
    # The console's parts: only ui/queries (and the demo) speak to Redis; no page uses another.
    set(_ui "${PROJECT_SOURCE_DIR}/tools/check-ui-parts.py")
    add_test(NAME ui_parts COMMAND "${Python3_EXECUTABLE}" "${_ui}" "${PROJECT_SOURCE_DIR}/ui")
    add_test(NAME ui_parts_selftest COMMAND "${Python3_EXECUTABLE}" "${_ui}" --selftest)
    set_tests_properties(ui_parts PROPERTIES LABELS gui TIMEOUT 60)
    set_tests_properties(ui_parts_selftest PROPERTIES LABELS tools TIMEOUT 60)
endfunction()
