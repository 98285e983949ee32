"""What several runner kinds use, in one place (not a kind: the registry
skips names that start with "_").

- `ethernet`: Ethernet frame sizes, the port profile, wire bytes and line rate;
- `profiles`: loading a platform/workload profile file into its model;
- `native`: calling a `routertwin._core` runner (errors naming the scenario
  file and case) and turning its counts into an RFC 2544 `TrialResult`;
- `schema`: cross-key rules every Schema may need ("exactly one of").
"""
