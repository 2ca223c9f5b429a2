"""Field numbers of pprof's ``profile.proto`` messages, shared by the reader and the writer.

Only the fields cctool reads or writes are named. See
https://github.com/google/pprof/blob/main/proto/profile.proto for the schema.
"""

from __future__ import annotations


class Profile:
    SAMPLE_TYPE = 1
    SAMPLE = 2
    MAPPING = 3
    LOCATION = 4
    FUNCTION = 5
    STRING_TABLE = 6
    DROP_FRAMES = 7
    KEEP_FRAMES = 8
    TIME_NANOS = 9
    DURATION_NANOS = 10
    PERIOD_TYPE = 11
    PERIOD = 12
    COMMENT = 13
    DEFAULT_SAMPLE_TYPE = 14
    DOC_URL = 15


class ValueType:
    TYPE = 1
    UNIT = 2


class Sample:
    LOCATION_ID = 1
    VALUE = 2
    LABEL = 3


class Label:
    KEY = 1
    STR = 2
    NUM = 3
    NUM_UNIT = 4


class Mapping:
    ID = 1
    FILENAME = 5


class Location:
    ID = 1
    MAPPING_ID = 2
    ADDRESS = 3
    LINE = 4


class Line:
    FUNCTION_ID = 1
    LINE = 2


class Function:
    ID = 1
    NAME = 2
    SYSTEM_NAME = 3
    FILENAME = 4
    START_LINE = 5
