"""The command-line shell over the oloproof library (private: import the library instead)."""
