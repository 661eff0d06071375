# Writes into OUTPUT_DIR what `cmake --install` puts beside the binary, made by the binary
# FAULTLINE itself so that they cannot drift from its options: the bash, zsh and fish completion
# scripts (`faultline completions SHELL`) and, with HELP2MAN set, the man page faultline.1.gz
# (help2man over `faultline --help`, with every command's own --help in a COMMANDS section).
file(MAKE_DIRECTORY ${OUTPUT_DIR})
foreach(shell_and_file bash=faultline zsh=_faultline fish=faultline.fish)
  string(REPLACE "=" ";" pair ${shell_and_file})
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND ${FAULTLINE} completions ${shell} OUTPUT_FILE ${OUTPUT_DIR}/${name}
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
if(NOT HELP2MAN)
  return()
endif()

# `faultline ARGS --help` as a roff block under the heading "faultline ARGS", then the same for
# each command it lists (CLI11's "Subcommands:" section), depth first.
function(describe_command words)
  execute_process(COMMAND ${FAULTLINE} ${words} --help OUTPUT_VARIABLE help COMMAND_ERROR_IS_FATAL ANY)
  if(words)
    list(JOIN words " " title)
    # roff: a backslash is \e, and a line that starts with . or ' is text only after \&.
    string(REPLACE "\\" "\\e" roff "${help}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" roff "${roff}")
    string(APPEND commands_section ".SS \"faultline ${title}\"\n.nf\n${roff}.fi\n")
  endif()
  string(REGEX MATCH "\nSubcommands:\n(  [^\n]*\n)+" listed "${help}")
  string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*" names "${listed}")
  foreach(name ${names})
    string(STRIP "${name}" name)
    set(sub_words ${words} ${name})
    describe_command("${sub_words}")
  endforeach()
  set(commands_section "${commands_section}" PARENT_SCOPE)
endfunction()
set(commands_section "[COMMANDS]\n")
describe_command("")
file(WRITE ${OUTPUT_DIR}/commands.h2m "${commands_section}")

execute_process(
  COMMAND ${HELP2MAN} --no-info --section=1 --version-string=${VERSION}
          "--name=diagnose failed GPU training jobs from their logs, offline"
          --include=${OUTPUT_DIR}/commands.h2m --output=${OUTPUT_DIR}/faultline.1 ${FAULTLINE}
  COMMAND_ERROR_IS_FATAL ANY)
# Debian's man pages are compressed, with no name or time in the gzip header (gzip -n).
execute_process(COMMAND gzip -9nf ${OUTPUT_DIR}/faultline.1 COMMAND_ERROR_IS_FATAL ANY)
