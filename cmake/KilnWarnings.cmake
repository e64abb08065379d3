# Warning flags shared by every Kiln target.
add_compile_options(-Wall -Wextra -Wno-unused-parameter)
if(KILN_WERROR)
  add_compile_options(-Werror)
endif()
