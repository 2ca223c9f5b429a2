"""Helpers of the GraphFrame users import (:mod:`cctool.graphframe`): the pandas view of
``gf.dataframe`` and Hatchet's file and list layouts. They take and return model frames;
only :mod:`cctool.graphframe` lifts them to the face."""
