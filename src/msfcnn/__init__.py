"""msfcnn: fit convolutional networks into microcontroller RAM with multi-stage fusion."""

__version__ = "0.1.0"
