// Masking what identifies a company's machines and people, so that a report can be shared.
#pragma once

#include "diagnose/analysis.h"

namespace faultline {

// Replaces, in every string of the analysis (paths, evidence lines, fixes, commands, notes,
// event fields), the names of hosts with host-1, host-2, ..., IP addresses (IPv4, IPv6) with
// ip-1, ip-2, ..., and user names with user-1, user-2, ..., numbered in order of first
// appearance, so that the same name gets the same mask in every output format. Hosts are those
// the analysis attributes lines to (syslog and journal envelopes, NCCL prefixes, folder names)
// and those of user@host prompts, wherever they appear as a whole word; user names are those of
// /home/NAME, /Users/NAME and user@host. GPU PCI addresses, serials and UUIDs are kept: they
// are what the reader needs to act on.
void redact(Analysis* analysis);

}  // namespace faultline
