"""The local library: every GGUF model the tools on this machine downloaded, and the folders a user added."""
