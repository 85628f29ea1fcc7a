#!/usr/bin/env python3
"""MindOS mood poller front door; the commands live in mindos/cli/mood_poller.py."""
import sys

from mindos.cli.mood_poller import console

if __name__ == "__main__":
    console()
