import Katana
import Testing
