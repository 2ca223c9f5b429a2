"""Event traces with timestamps (Chrome trace events, OTF2) read as calling context trees."""
