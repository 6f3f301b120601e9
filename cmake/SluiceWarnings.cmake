# sluice_set_warnings(target): the project's warning set, -Werror when asked.
function(sluice_set_warnings target)
    target_compile_options(${target} PRIVATE
        -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes
        -Wmissing-prototypes -Wold-style-definition -Wvla -Wpointer-arith
        -Wcast-qual -Wundef -Wno-unused-parameter
        # snprintf into fixed buffers truncates on purpose (reasons, error
        # text); the check differs between optimisation levels.
        -Wno-format-truncation)
    if(SLUICE_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
