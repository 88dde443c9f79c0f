"""A stand-in for OpenCV's ``cv2.VideoCapture`` (no camera on a test machine), shared by the
capture tests here and the service's camera tests."""

from __future__ import annotations

import cv2
import numpy as np


class FakeCapture:
    """cv2.VideoCapture stand-in: records what it was opened with and asked for."""

    opened: list = []

    def __init__(self, device, api):
        self.device, self.api, self.props, self.released = device, api, {}, False
        FakeCapture.opened.append(self)

    def isOpened(self):
        return not str(self.device).endswith("missing")

    def set(self, prop, value):
        self.props[prop] = value
        return True

    def grab(self):
        return True

    def read(self):
        w = int(self.props.get(cv2.CAP_PROP_FRAME_WIDTH, 64))
        h = int(self.props.get(cv2.CAP_PROP_FRAME_HEIGHT, 48))
        return True, np.zeros((h, w, 3), np.uint8)

    def release(self):
        self.released = True
